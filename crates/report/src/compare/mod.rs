//! `ledgerbench compare`: per-metric deltas between a baseline and a current
//! set of results, with a verdict a CI job can gate on.
//!
//! Counters are judged on a tight threshold of the median ratio, in both
//! directions: a meter that loses bytes (a WAL no longer counted, a device
//! no longer read) looks like an improvement, so a counter that falls past
//! its threshold fails like one that rises, until the baseline is updated on
//! purpose. A judged metric present on one side only fails too. Timings are
//! judged only with at least [`MIN_TIMING_RUNS`] runs on each side, by a
//! bootstrap confidence interval of the ratio of medians: a regression needs
//! the whole interval past the threshold, so one noisy run on a shared
//! machine cannot fail a build.

use std::collections::BTreeMap;

mod counter_noise;
mod differences;
mod markdown;
pub use differences::differences;

pub use markdown::markdown;

use ledgerbench_rng::Rng;

use crate::ReportError;
use crate::doc::Loaded;
use crate::metrics::{Better, Class, Metric, extract_with_batches};

/// Runs needed on each side before a timing is judged.
pub const MIN_TIMING_RUNS: usize = 3;
/// Default threshold of counters, percent.
pub const COUNTER_THRESHOLD_PCT: f64 = 2.0;
/// Default threshold of device- and process-measured counters, percent.
pub const DEVICE_THRESHOLD_PCT: f64 = 10.0;
/// Default threshold of timings, percent.
pub const TIMING_THRESHOLD_PCT: f64 = 10.0;
/// Device and process byte counters that differ by no more than this are
/// the same: a journal commit or a metadata read lands in one batch or the
/// next by timer, and 4 KiB of 0 is not a ratio to judge.
pub const DEVICE_FLOOR_BYTES: f64 = 256.0 * 1024.0;
/// The floor of one batch's device reads: a small run's ingestion reads
/// back a file only when the kernel has dropped or not yet cached its
/// pages, which timing decides (0 in one run, 1 MiB in the next on the CI
/// smoke); the run's totals keep [`DEVICE_FLOOR_BYTES`].
pub const BATCH_READ_FLOOR_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

/// Measured by the device or the kernel (the filesystem's timed journal
/// commits, writeback), not by the engine: a wider band.
fn measured_outside(name: &str) -> bool {
    name.contains("device") || name.contains("process")
}

/// The absolute difference under which two figures of `name` are one:
/// [`device_floor`] for device and process bytes, else none.
fn same_floor(name: &str) -> f64 {
    if measured_outside(name) && name.ends_with("_bytes") {
        device_floor(name)
    } else {
        0.0
    }
}

/// The absolute difference under which two device byte counts are the same.
fn device_floor(name: &str) -> f64 {
    if name.starts_with("batches.") && name.ends_with("device_read_bytes") {
        BATCH_READ_FLOOR_BYTES
    } else {
        DEVICE_FLOOR_BYTES
    }
}
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// What a comparison concluded about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within its threshold.
    Same,
    /// Better past its threshold (timings only: a counter that falls is [`Verdict::Fell`]).
    Improved,
    /// A counter fell past its threshold: fails the comparison, since a
    /// broken meter reads low; update the baseline when the fall is intended.
    Fell,
    /// Worse past its threshold: fails the comparison.
    Regressed,
    /// An exact metric changed: fails the comparison.
    Changed,
    /// Not judged (an info metric, too few runs, or machines differ).
    NotJudged,
    /// A judged metric present on one side only: fails the comparison.
    Missing,
}

/// One metric's comparison.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// Run label.
    pub run: String,
    /// Metric name.
    pub name: String,
    /// Its class.
    pub class: Class,
    /// Median of the baseline's runs.
    pub baseline: Option<f64>,
    /// Median of the current runs.
    pub current: Option<f64>,
    /// Current / baseline median.
    pub ratio: Option<f64>,
    /// 95% bootstrap interval of the ratio (timings, and counters that
    /// vary, with enough runs).
    pub interval: Option<(f64, f64)>,
    /// Lowest and highest of one side's runs, where a counter's repeats
    /// differ (`scripts/counter-noise.sh` reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<(f64, f64)>,
    /// Threshold applied, percent.
    pub threshold_pct: f64,
    /// Runs on each side.
    pub runs: (usize, usize),
    /// The verdict.
    pub verdict: Verdict,
    /// Why it was not judged, when it was not.
    pub note: Option<String>,
}

/// Comparison settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `PATTERN=PCT` thresholds; `*` matches any text; the last match wins.
    /// The pattern is matched against `run/metric` and against `metric`.
    pub thresholds: Vec<(String, f64)>,
    /// Compare even when configs or builds differ.
    pub force: bool,
    /// Judge only these classes (all when empty).
    pub only: Vec<Class>,
}

/// Parses a `PATTERN=PCT` threshold.
pub fn parse_threshold(s: &str) -> Result<(String, f64), ReportError> {
    let bad = || {
        ReportError::Usage(format!(
            "--threshold `{s}`: expected PATTERN=PERCENT, e.g. '*write_amp*=1' or '*p99_us=25'"
        ))
    };
    let (p, v) = s.rsplit_once('=').ok_or_else(bad)?;
    let pct: f64 = v.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
    if !(pct >= 0.0 && pct.is_finite()) {
        return Err(bad());
    }
    Ok((p.trim().to_string(), pct))
}

/// `*`-only glob match.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// True for a timing too small to judge. Times in seconds are mostly of
/// single operations or phases, where one preemption on a shared machine
/// (milliseconds) moves a sub-millisecond figure by multiples; latency
/// percentiles in microseconds summarise many operations and hold steady
/// down to tens of microseconds.
fn below_floor(name: &str, v: f64) -> bool {
    let leaf = name.rsplit('.').next().unwrap_or(name);
    if leaf.ends_with("_us") {
        v < 50.0
    } else if leaf.ends_with("per_sec") {
        false
    } else {
        v < 0.001
    }
}

/// The median of a non-empty list (every metric gathered has a value).
fn median(v: &[f64]) -> f64 {
    ledgerbench_core::quantile::median(v).unwrap_or(f64::NAN)
}

/// 95% bootstrap interval of median(cur) / median(base), seeded so the
/// same inputs always give the same interval.
pub fn bootstrap_ratio(base: &[f64], cur: &[f64]) -> Option<(f64, f64)> {
    if base.is_empty() || cur.is_empty() {
        return None;
    }
    let mut r = Rng::new(0x006b_7662_656e_6368);
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let (mut b, mut c) = (vec![0.0; base.len()], vec![0.0; cur.len()]);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for x in b.iter_mut() {
            *x = base[r.below(base.len() as u64) as usize];
        }
        for x in c.iter_mut() {
            *x = cur[r.below(cur.len() as u64) as usize];
        }
        let mb = median(&b);
        if mb > 0.0 {
            ratios.push(median(&c) / mb);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ledgerbench_core::quantile::sort(&mut ratios);
    let at = |q: f64| ledgerbench_core::quantile::quantile_sorted(&ratios, q);
    Some((at(0.025)?, at(0.975)?))
}

fn gather(docs: &[Loaded]) -> BTreeMap<(String, String), (Class, Better, Vec<f64>)> {
    let mut m: BTreeMap<(String, String), (Class, Better, Vec<f64>)> = BTreeMap::new();
    for d in docs {
        for Metric {
            run,
            name,
            value,
            class,
            better,
            ..
        } in extract_with_batches(d)
        {
            m.entry((run, name))
                .or_insert((class, better, Vec::new()))
                .2
                .push(value);
        }
    }
    m
}

/// Compares; refuses differing configs or builds unless forced.
pub fn compare(base: &[Loaded], cur: &[Loaded], opts: &Options) -> Result<Vec<Row>, ReportError> {
    let (hard, machine) = differences(base, cur);
    if !hard.is_empty() && !opts.force {
        return Err(ReportError::Incomparable(hard));
    }
    let (b, c) = (gather(base), gather(cur));
    let mut keys: Vec<&(String, String)> = b.keys().chain(c.keys()).collect();
    keys.sort();
    keys.dedup();
    Ok(keys
        .into_iter()
        .map(|key| row_of(key, (b.get(key), c.get(key)), opts, &machine))
        .collect())
}

/// A metric's samples in one side's results: its class, which way is
/// better, and a value per run.
type Samples = (Class, Better, Vec<f64>);

/// One metric compared: medians, threshold, and the verdict its class gets.
///
/// Long because each class of metric gets its rule in one match, side by side, so the rules can be compared.
fn row_of(
    key: &(String, String),
    (bv, cv): (Option<&Samples>, Option<&Samples>),
    opts: &Options,
    machine: &[String],
) -> Row {
    let (class, better) = bv
        .or(cv)
        .map(|x| (x.0, x.1))
        .unwrap_or((Class::Info, Better::Lower));
    // Device bytes include the filesystem's journal, whose commits follow a
    // timer, and process bytes include kernel writeback: a few percent of
    // run-to-run spread is normal for both.
    let device = measured_outside(&key.1);
    let default = match class {
        Class::Timing => TIMING_THRESHOLD_PCT,
        _ if device => DEVICE_THRESHOLD_PCT,
        _ => COUNTER_THRESHOLD_PCT,
    };
    let full = format!("{}/{}", key.0, key.1);
    let threshold_pct = opts
        .thresholds
        .iter()
        .rev()
        .find(|(p, _)| glob(p, &full) || glob(p, &key.1))
        .map_or(default, |t| t.1);
    let mut row = Row {
        run: key.0.clone(),
        name: key.1.clone(),
        class,
        baseline: bv.map(|x| median(&x.2)),
        current: cv.map(|x| median(&x.2)),
        ratio: None,
        interval: None,
        spread: None,
        threshold_pct,
        runs: (bv.map_or(0, |x| x.2.len()), cv.map_or(0, |x| x.2.len())),
        verdict: Verdict::NotJudged,
        note: None,
    };
    let judged = (opts.only.is_empty() || opts.only.contains(&class)) && class != Class::Info;
    let (Some(bm), Some(cm)) = (row.baseline, row.current) else {
        let side = if row.baseline.is_none() {
            "new: absent from the baseline"
        } else {
            "vanished: absent from the current results"
        };
        row.note = Some(side.into());
        row.verdict = if judged {
            Verdict::Missing
        } else {
            Verdict::NotJudged
        };
        return row;
    };
    row.ratio = (bm != 0.0).then(|| cm / bm);
    let noisy = (class == Class::Counter)
        .then(|| counter_noise::noisy(&key.0, &key.1, (bv, cv)))
        .flatten();
    let judge = Judge {
        better,
        t: threshold_pct / 100.0,
    };
    row.verdict = match class {
        _ if !judged => Verdict::NotJudged,
        Class::Info => Verdict::NotJudged,
        Class::Exact => {
            if bm == cm {
                Verdict::Same
            } else {
                Verdict::Changed
            }
        }
        Class::Counter if same_floor(&key.1) > 0.0 && (cm - bm).abs() <= same_floor(&key.1) => {
            Verdict::Same
        }
        Class::Counter => match noisy {
            Some(n) => counter_noise::verdict(&mut row, (bv, cv), &judge, n),
            None => counter_verdict(&mut row, &judge),
        },
        Class::Timing => timing_verdict(&mut row, (bv, cv), &judge, machine),
    };
    row
}

/// Which way a ratio must move, and how far, to count.
struct Judge {
    better: Better,
    /// The threshold as a fraction.
    t: f64,
}

impl Judge {
    /// Worse when the ratio is past 1 + t (lower is better) or 1 - t.
    fn worse(&self, r: f64) -> bool {
        match self.better {
            Better::Lower => r > 1.0 + self.t,
            Better::Higher => r < 1.0 - self.t,
        }
    }

    fn improved(&self, r: f64) -> bool {
        match self.better {
            Better::Lower => r < 1.0 - self.t,
            Better::Higher => r > 1.0 + self.t,
        }
    }

    /// An interval of the ratio moved only when all of it is past the
    /// threshold; `better` is what a move the right way is called (a
    /// timing improved, a counter fell).
    fn of_interval(&self, interval: Option<(f64, f64)>, better: Verdict) -> Verdict {
        match interval {
            Some((lo, hi)) if self.worse(lo) && self.worse(hi) => Verdict::Regressed,
            Some((lo, hi)) if self.improved(lo) && self.improved(hi) => better,
            Some(_) => Verdict::Same,
            None => Verdict::NotJudged,
        }
    }
}

/// A timing is judged only on one machine, above the noise floor, with
/// enough repeats on both sides, by the bootstrap interval of the ratio.
fn timing_verdict(
    row: &mut Row,
    (bv, cv): (Option<&Samples>, Option<&Samples>),
    judge: &Judge,
    machine: &[String],
) -> Verdict {
    let (Some(bm), Some(cm)) = (row.baseline, row.current) else {
        return Verdict::NotJudged;
    };
    if !machine.is_empty() {
        row.note = Some(format!("machines differ ({})", machine.join("; ")));
        Verdict::NotJudged
    } else if below_floor(&row.name, bm) && below_floor(&row.name, cm) {
        row.note = Some("below the noise floor (1 ms, or 50 us for latencies)".into());
        Verdict::NotJudged
    } else if row.runs.0 < MIN_TIMING_RUNS || row.runs.1 < MIN_TIMING_RUNS {
        row.note = Some(format!(
            "needs --repeat {MIN_TIMING_RUNS} or more on both sides"
        ));
        Verdict::NotJudged
    } else {
        row.interval = interval_of((bv, cv));
        judge.of_interval(row.interval, Verdict::Improved)
    }
}

/// The bootstrap interval of the ratio of the two sides' runs.
fn interval_of((bv, cv): (Option<&Samples>, Option<&Samples>)) -> Option<(f64, f64)> {
    let side = |x: Option<&Samples>| x.map(|x| x.2.clone()).unwrap_or_default();
    bootstrap_ratio(&side(bv), &side(cv))
}

/// A counter held to its threshold, in both directions.
fn counter_verdict(row: &mut Row, judge: &Judge) -> Verdict {
    let cm = row.current.unwrap_or(0.0);
    match row.ratio {
        Some(r) if judge.worse(r) => Verdict::Regressed,
        Some(r) if judge.improved(r) => {
            row.note = Some(fall_note(cm));
            Verdict::Fell
        }
        Some(_) => Verdict::Same,
        // From zero: any growth of a lower-is-better counter is a regression.
        None if cm > 0.0 && judge.better == Better::Lower => Verdict::Regressed,
        None if cm != 0.0 => Verdict::Regressed,
        None => Verdict::Same,
    }
}

/// Why a fallen counter fails: the gate cannot tell a real saving from a
/// meter that stopped counting.
fn fall_note(current: f64) -> String {
    let what = if current == 0.0 {
        "dropped to 0"
    } else {
        "fell"
    };
    format!(
        "{what}: a real saving or a meter that stopped counting; update the baseline on purpose if intended"
    )
}

/// True when any row fails the comparison.
pub fn failed(rows: &[Row]) -> bool {
    rows.iter().any(|r| {
        matches!(
            r.verdict,
            Verdict::Regressed | Verdict::Changed | Verdict::Fell | Verdict::Missing
        )
    })
}

#[cfg(test)]
mod tests;
