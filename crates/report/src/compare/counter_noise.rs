//! Counters that vary between identical runs. An engine that compacts or
//! flushes in the background on its own clock (Pebble, Badger) writes a
//! different number of bytes in two runs of the same binary and seed, so a
//! tight counter threshold between one run a side is a false alarm. Such a
//! counter is judged like a timing, by the bootstrap interval of its runs,
//! once each side has enough of them. With fewer, a spread measured for
//! its engine widens its threshold; one seen only in a side's own runs is
//! shown, not judged.
//!
//! Two sources say a counter varies: the runs themselves (a side whose
//! repeats differ), and `counter-noise.json`, measured by
//! `scripts/counter-noise.sh` from repeated identical runs of every engine,
//! for comparisons of one run a side.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::{
    Judge, MIN_TIMING_RUNS, Row, Samples, Verdict, counter_verdict, fall_note, glob, interval_of,
    same_floor,
};

/// What `scripts/counter-noise.sh` measured.
#[derive(Debug, serde::Deserialize)]
struct Measured {
    /// The command each engine ran, repeated.
    command: String,
    /// Per engine, the counters that differed between its runs.
    engines: BTreeMap<String, Vec<Spread>>,
}

/// A counter that differed between identical runs of one engine.
#[derive(Debug, serde::Deserialize)]
struct Spread {
    /// Metric name, `*` for a batch's name.
    metric: String,
    /// The largest relative difference seen, percent.
    pct: f64,
}

fn measured() -> &'static Measured {
    static M: OnceLock<Measured> = OnceLock::new();
    M.get_or_init(|| {
        serde_json::from_str(include_str!("counter-noise.json"))
            .expect("counter-noise.json is checked by its test")
    })
}

/// Why a counter is not held to its tight threshold: it varied.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Noisy {
    /// A side's own runs differ: lowest and highest of that side.
    Within(f64, f64),
    /// It differed between identical runs of this engine (percent), as
    /// measured by `scripts/counter-noise.sh`.
    Measured { engine: String, pct: f64 },
}

impl Noisy {
    /// What the comparison's note says.
    pub(super) fn note(&self) -> String {
        match self {
            Self::Within(lo, hi) => {
                format!("varies between the runs of one side ({lo} to {hi})")
            }
            Self::Measured { engine, pct } => format!(
                "varies between identical runs of {engine} (by up to {pct:.1}%, `scripts/counter-noise.sh`: {})",
                measured().command
            ),
        }
    }
}

/// The engine a run label names: `m1/pebble@4t` is `pebble`.
fn engine_of(run: &str) -> &str {
    let base = run.rsplit('/').next().unwrap_or(run);
    base.split(['@', '#']).next().unwrap_or(base)
}

/// A batch's name in a metric replaced by `*`, as the measured file keeps it.
fn general(metric: &str) -> String {
    match metric.strip_prefix("batches.") {
        Some(rest) => match rest.split_once('.') {
            Some((_, tail)) => format!("batches.*.{tail}"),
            None => metric.to_string(),
        },
        None => metric.to_string(),
    }
}

/// Whether the counter `metric` of run `run` varies, and why: its own
/// repeats first, then what was measured of its engine.
pub(super) fn noisy(
    run: &str,
    metric: &str,
    (bv, cv): (Option<&Samples>, Option<&Samples>),
) -> Option<Noisy> {
    for side in [bv, cv].into_iter().flatten() {
        let v = &side.2;
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Device bytes within their floor are one figure (compare's rule).
        let same = hi - lo <= same_floor(metric);
        if v.len() > 1 && !same {
            return Some(Noisy::Within(lo, hi));
        }
    }
    listed(measured(), run, metric)
}

/// What `m` says of run `run`'s counter `metric`.
fn listed(m: &Measured, run: &str, metric: &str) -> Option<Noisy> {
    let engine = engine_of(run);
    let name = general(metric);
    m.engines
        .get(engine)?
        .iter()
        .find(|s| glob(&s.metric, &name))
        .map(|s| Noisy::Measured {
            engine: engine.to_string(),
            pct: s.pct,
        })
}

/// A counter that varies between identical runs (this module) is
/// judged as a timing is, by the bootstrap interval of enough runs a side.
/// With fewer, a spread measured for its engine widens its band (the gate
/// compares one run a side, and a meter that doubles must still fail); a
/// spread seen only in a side's own few runs is shown, not judged.
pub(super) fn verdict(
    row: &mut Row,
    (bv, cv): (Option<&Samples>, Option<&Samples>),
    judge: &Judge,
    noisy: Noisy,
) -> Verdict {
    let why = noisy.note();
    if row.runs.0 < MIN_TIMING_RUNS || row.runs.1 < MIN_TIMING_RUNS {
        return match noisy {
            Noisy::Measured { pct, .. } => measured_band_verdict(row, judge, pct, &why),
            Noisy::Within(lo, hi) => {
                row.spread = Some((lo, hi));
                row.note = Some(format!(
                    "{why}: give --repeat {MIN_TIMING_RUNS} or more on both sides to judge it against that spread"
                ));
                Verdict::NotJudged
            }
        };
    }
    if let Noisy::Within(lo, hi) = noisy {
        row.spread = Some((lo, hi));
    }
    row.interval = interval_of((bv, cv));
    let verdict = judge.of_interval(row.interval, Verdict::Fell);
    row.note = Some(if verdict == Verdict::Fell {
        format!("{why}; {}", fall_note(row.current.unwrap_or(0.0)))
    } else {
        format!("{why}: judged by the interval of its runs")
    });
    verdict
}

/// How many times its measured spread a noisy counter's band adds to the
/// threshold: the spread is the widest of sixteen identical runs, and a
/// seventeenth may go a little past it.
const SPREAD_MULTIPLE: f64 = 2.0;

/// One run a side of a counter measured to vary by up to `pct` percent:
/// held, both ways, to its threshold plus twice that spread.
fn measured_band_verdict(row: &mut Row, judge: &Judge, pct: f64, why: &str) -> Verdict {
    let wide = Judge {
        better: judge.better,
        t: judge.t + SPREAD_MULTIPLE * pct / 100.0,
    };
    let band = 100.0 * wide.t;
    row.threshold_pct = band;
    let verdict = counter_verdict(row, &wide);
    let held = format!(
        "{why}: fewer than {MIN_TIMING_RUNS} runs a side, so held to ±{band:.1}% (its threshold plus twice that spread)"
    );
    row.note = Some(match row.note.take() {
        Some(fall) => format!("{held}; {fall}"),
        None => held,
    });
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Better, Class};

    #[test]
    fn the_measured_file_parses_and_names_real_engines() {
        let m = measured();
        assert!(!m.command.is_empty());
        for (engine, spreads) in &m.engines {
            assert!(!spreads.is_empty(), "{engine}");
            for s in spreads {
                assert!(s.pct.is_finite() && s.pct > 0.0, "{engine} {}", s.metric);
            }
        }
    }

    #[test]
    fn a_side_whose_repeats_differ_is_noisy_and_identical_repeats_are_not() {
        let s = |v: Vec<f64>| (Class::Counter, Better::Lower, v);
        let (a, b) = (s(vec![3.33, 3.65, 3.4]), s(vec![3.5]));
        assert_eq!(
            noisy("x", "summary.write_amp_engine", (Some(&a), Some(&b))),
            Some(Noisy::Within(3.33, 3.65))
        );
        let same = s(vec![4.0, 4.0, 4.0]);
        assert_eq!(
            noisy("x", "summary.write_amp_engine", (Some(&same), Some(&same))),
            None
        );
        // Device bytes a journal commit apart are the same figure.
        let dev = s(vec![1e8, 1e8 + 4096.0]);
        assert_eq!(
            noisy("x", "summary.device_write_bytes", (Some(&dev), None)),
            None
        );
    }

    #[test]
    fn a_counter_listed_for_its_engine_is_noisy_in_every_batch_and_label() {
        let m: Measured = serde_json::from_str(
            r#"{"command": "c", "engines": {"pebble": [
                {"metric": "batches.*.stores.txdata.engine_write_bytes", "pct": 9.6},
                {"metric": "summary.stores.txdata.write_amp_engine", "pct": 9.6}]}}"#,
        )
        .expect("json");
        let noisy = |run: &str, metric: &str| listed(&m, run, metric);
        let want = Some(Noisy::Measured {
            engine: "pebble".into(),
            pct: 9.6,
        });
        assert_eq!(
            noisy("pebble", "summary.stores.txdata.write_amp_engine"),
            want
        );
        assert_eq!(
            noisy(
                "m1/pebble@8t",
                "batches.batch7.stores.txdata.engine_write_bytes"
            ),
            want
        );
        // Another engine, another counter, another store: held to the threshold.
        assert_eq!(
            noisy("rocksdb-leveled", "summary.stores.txdata.write_amp_engine"),
            None
        );
        assert_eq!(noisy("pebble", "summary.stores.txdata.logical_bytes"), None);
        assert_eq!(
            noisy("pebble", "summary.stores.ledgers.write_amp_engine"),
            None
        );
        // The row's note names the engine and how far it varied.
        let note = noisy("pebble", "summary.stores.txdata.write_amp_engine")
            .map(|n| n.note())
            .unwrap_or_default();
        assert!(
            note.contains("identical runs of pebble (by up to 9.6%"),
            "{note}"
        );
    }

    #[test]
    fn labels_and_batches_are_read_as_the_file_keeps_them() {
        assert_eq!(engine_of("m1/pebble@4t"), "pebble");
        assert_eq!(engine_of("badger"), "badger");
        assert_eq!(
            general("batches.batch4.stores.txdata.engine_write_bytes"),
            "batches.*.stores.txdata.engine_write_bytes"
        );
        assert_eq!(general("summary.wall_secs"), "summary.wall_secs");
    }

    #[test]
    fn a_measured_counter_with_one_run_a_side_is_held_to_a_band_widened_by_its_spread() {
        let judge = Judge {
            better: Better::Lower,
            t: 0.02,
        };
        let row = |b: f64, c: f64| Row {
            run: "rocksdb-leveled".into(),
            name: "batches.batch3.stores.txindex.device_write_bytes".into(),
            class: Class::Counter,
            baseline: Some(b),
            current: Some(c),
            ratio: Some(c / b),
            interval: None,
            spread: None,
            threshold_pct: 2.0,
            runs: (1, 1),
            verdict: Verdict::NotJudged,
            note: None,
        };
        let noisy = || Noisy::Measured {
            engine: "rocksdb-leveled".into(),
            pct: 4.5,
        };
        let judged = |c: f64| {
            let mut r = row(100.0, c);
            let v = verdict(&mut r, (None, None), &judge, noisy());
            (v, r)
        };
        // Within 2% + 2 x 4.5% = 11% either way: the same figure.
        let (v, r) = judged(110.0);
        assert_eq!(v, Verdict::Same, "{r:?}");
        assert!((r.threshold_pct - 11.0).abs() < 1e-9, "{r:?}");
        let note = r.note.unwrap_or_default();
        assert!(note.contains("held to ±11.0%"), "{note}");
        // A doubled meter, or one that fell by half, still fails.
        assert_eq!(judged(201.0).0, Verdict::Regressed);
        let (v, r) = judged(50.0);
        assert_eq!(v, Verdict::Fell, "{r:?}");
        assert!(r.note.unwrap_or_default().contains("fell"));
        // A spread seen only in a side's own two runs is shown, not judged.
        let mut r = row(100.0, 300.0);
        r.runs = (2, 1);
        let v = verdict(&mut r, (None, None), &judge, Noisy::Within(90.0, 110.0));
        assert_eq!(v, Verdict::NotJudged, "{r:?}");
        assert_eq!(r.spread, Some((90.0, 110.0)));
    }
}
