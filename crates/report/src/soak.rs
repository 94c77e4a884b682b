//! A soak's drift verdict: for each engine, every metric sampled once an
//! interval (throughput, latency percentiles, device bytes, footprint,
//! memory) judged flat, drifting, stepped or swinging after the warm-up, by
//! [`ledgerbench_stats::drift`]. Derived from the committed segments each
//! time, so a report and the run's own summary say the same.

use ledgerbench_results::workload::{OpsConfig, SoakConfig};
use ledgerbench_results::{BackendRun, SegmentRecord};
use ledgerbench_stats::drift::{Drift, DriftOptions, Verdict, judge};

mod metrics;
pub use metrics::{BEYOND, needed};
use metrics::{RUN_METRICS, STORE_METRICS, thin};

/// A `--warmup` that names no warm-up: what was given and what to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadWarmup(pub String);

/// Checks a `--warmup` before a run spends hours: `auto`, a time, or a
/// share from 0% to under 100%.
pub fn check_warmup(w: &str) -> Result<(), BadWarmup> {
    let w = w.trim();
    let ok = w == "auto"
        || match w.strip_suffix('%') {
            Some(p) => p
                .trim()
                .parse::<f64>()
                .is_ok_and(|v| (0.0..100.0).contains(&v)),
            None => parse_time(w).is_some(),
        };
    ok.then_some(()).ok_or_else(|| {
        BadWarmup(format!(
            "--warmup {w}: give `auto`, a time such as 30m or 90s, or a share from 0% to under 100% such as 25%"
        ))
    })
}

/// LittDB's horizon: a slope is projected over 14 days.
pub const HORIZON_SECS: f64 = 14.0 * 86_400.0;

/// The segments set aside before judging, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Warmup {
    /// Segments set aside, from the first.
    pub segments: usize,
    /// Their wall time, seconds.
    pub secs: f64,
    /// What ended it.
    pub why: String,
}

/// One metric of one engine, judged.
#[derive(Debug, Clone)]
pub struct Call {
    /// The store it is of; empty for the process as a whole.
    pub store: String,
    /// What was sampled.
    pub metric: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// The verdict and the figures behind it.
    pub drift: Drift,
}

/// A soak run's verdict.
#[derive(Debug, Clone)]
pub struct SoakVerdict {
    /// The run's label.
    pub label: String,
    /// What was set aside.
    pub warmup: Warmup,
    /// Each judged interval's start, seconds into the run (a step's
    /// sample number indexes it).
    pub starts: Vec<f64>,
    /// Every metric that was measured, in the panel's order.
    pub calls: Vec<Call>,
    /// Percentiles left unjudged because an interval held too few samples
    /// for them, in words.
    pub thin: Vec<String>,
}

/// The number in a mark label such as `batch 12` or `slot 400`.
fn mark_number(mark: &str, word: &str) -> Option<u64> {
    mark.strip_prefix(word)?.trim().parse().ok()
}

/// Where the warm-up ends: as `cfg.warmup` says, or (`auto`) where the
/// workload reaches its steady state. Blobs: the first expiry (after
/// `ttl_batches`); Solana: the first purge (after `keep_slots`); YCSB and
/// accounts: the load. At least the first interval, which holds the
/// engine's start; a workload without a known ramp sets aside a tenth.
pub fn warmup(
    segments: &[SegmentRecord],
    cfg: &SoakConfig,
    ops: &OpsConfig,
) -> Result<Warmup, BadWarmup> {
    let w = cfg.warmup.trim();
    check_warmup(w)?;
    let header = &ops.header;
    let n = segments.len();
    let ends = ends(segments);
    let (k, why) = if let Some(p) = w.strip_suffix('%') {
        // Checked above: a share from 0 to under 100.
        let share: f64 = p.trim().parse().unwrap_or(0.0);
        let k = (n as f64 * share / 100.0).ceil() as usize;
        (k, format!("the first {w} of the intervals, as asked"))
    } else if w == "auto" {
        let src = &header.source;
        let num = |key: &str| src.get(key).and_then(serde_json::Value::as_u64);
        let found = |word: &str, at: u64| {
            segments
                .iter()
                .position(|s| mark_number(&s.mark, word).is_some_and(|b| b >= at))
                .map(|i| i + 1)
        };
        let ramp = match header.workload.as_str() {
            "blobs" => num("ttl_batches").and_then(|t| {
                found("batch", t).map(|k| (k, format!("the first expiry (TTL {t} batches)")))
            }),
            "solana" => num("keep_slots").and_then(|t| {
                found("slot", t).map(|k| (k, format!("retention's start ({t} slots kept)")))
            }),
            "ycsb" | "accounts" => segments
                .iter()
                .position(|s| s.mark.starts_with("ops"))
                .map(|i| (i + 1, "the load".to_string())),
            _ => None,
        };
        ramp.unwrap_or_else(|| {
            (
                n.div_ceil(10),
                "a tenth of the intervals (no known ramp reached)".into(),
            )
        })
    } else {
        // Checked above: a time.
        let secs = parse_time(w).unwrap_or(0.0);
        (
            ends.partition_point(|&e| e < secs),
            format!("the first {w}, as asked"),
        )
    };
    let k = k.max(1).min(n);
    Ok(Warmup {
        segments: k,
        secs: ends[k],
        why,
    })
}

/// Seconds from the run's start to the end of each of its first `k`
/// segments, for `k` from 0 (0 s) to all of them.
fn ends(segments: &[SegmentRecord]) -> Vec<f64> {
    let mut t = 0.0;
    std::iter::once(0.0)
        .chain(segments.iter().map(|s| {
            t += s.total_secs;
            t
        }))
        .collect()
}

/// Judges every metric the run measured after the warm-up; `None` when the
/// run is no soak or has no segments.
pub fn verdict(run: &BackendRun, ops: &OpsConfig) -> Result<Option<SoakVerdict>, BadWarmup> {
    let Some(cfg) = &ops.soak else {
        return Ok(None);
    };
    let Some(segments) = run.replay.as_ref().map(|r| &r.segments[..]) else {
        return Ok(None);
    };
    if segments.is_empty() {
        return Ok(None);
    }
    let warmup = warmup(segments, cfg, ops)?;
    let o = DriftOptions {
        threshold: cfg.drift_threshold,
        horizon: HORIZON_SECS / cfg.interval_secs.max(1e-3),
        ..DriftOptions::default()
    };
    let judged = &segments[warmup.segments..];
    let mut calls = Vec::new();
    let mut push = |store: &str, metric, unit, x: Option<Vec<f64>>| {
        // A metric missing from any judged interval is not judged: a
        // verdict on a series with holes would be on another series.
        if let Some(x) = x.filter(|x| !x.is_empty()) {
            calls.push(Call {
                store: store.to_string(),
                metric,
                unit,
                drift: judge(&x, &o),
            });
        }
    };
    let stores: Vec<String> = segments[0].stores.iter().map(|s| s.store.clone()).collect();
    let thin = stores
        .iter()
        .enumerate()
        .flat_map(|(i, store)| thin(judged, i, store))
        .collect();
    for (i, store) in stores.iter().enumerate() {
        for &(metric, unit, f) in STORE_METRICS {
            let x = judged
                .iter()
                .map(|s| s.stores.get(i).and_then(|b| f(s, b)))
                .collect();
            push(store, metric, unit, x);
        }
    }
    for &(metric, unit, f) in RUN_METRICS {
        push("", metric, unit, judged.iter().map(f).collect());
    }
    // Each judged interval's start: where a step is.
    let starts = ends(segments)[warmup.segments..segments.len()].to_vec();
    Ok(Some(SoakVerdict {
        label: run.label.clone(),
        warmup,
        starts,
        calls,
        thin,
    }))
}

/// Every chart of a soak's panel, in LittDB's order: each of `stores`'
/// metrics, then the process's (store empty), with their units.
pub fn panel(stores: &[String]) -> Vec<(String, &'static str, &'static str)> {
    let per_store = stores
        .iter()
        .flat_map(|s| STORE_METRICS.iter().map(move |m| (s.clone(), m.0, m.1)));
    let per_run = RUN_METRICS.iter().map(|m| (String::new(), m.0, m.1));
    per_store.chain(per_run).collect()
}

/// The points of one metric of one run over time (minutes from its start,
/// the value at each interval's end), warm-up included: a chart's line.
/// `store` empty for the process's metrics.
pub fn series(run: &BackendRun, store: &str, metric: &str) -> Vec<(f64, f64)> {
    let Some(segments) = run.replay.as_ref().map(|r| &r.segments[..]) else {
        return Vec::new();
    };
    let per_store = STORE_METRICS.iter().find(|m| m.0 == metric).map(|m| m.2);
    let per_run = RUN_METRICS.iter().find(|m| m.0 == metric).map(|m| m.2);
    let mut t = 0.0;
    let mut points = Vec::new();
    for s in segments {
        t += s.total_secs;
        let v = if store.is_empty() {
            per_run.and_then(|f| f(s))
        } else {
            let b = s.stores.iter().find(|b| b.store == store);
            per_store.zip(b).and_then(|(f, b)| f(s, b))
        };
        if let Some(v) = v {
            points.push((t / 60.0, v));
        }
    }
    points
}

/// A soak run's verdict as markdown under a heading of `level` (`##`,
/// `###`) naming `label`: its table, or why there is none; empty for a run
/// that is no soak. The run's summary and the report both print this.
pub fn run_section(level: &str, label: &str, run: &BackendRun, ops: &OpsConfig) -> String {
    let body = match verdict(run, ops) {
        Ok(Some(v)) => table(&v),
        Ok(None) if ops.soak.is_none() => return String::new(),
        Ok(None) => "No intervals recorded.\n".into(),
        Err(e) => format!("Not judged: {e}\n"),
    };
    format!("{level} {label}\n\n{body}\n")
}

/// A time such as `90s`, `15m`, `2h` or `1d`, in seconds (a bare number is
/// seconds); `None` for anything else or a time that is not above zero.
pub fn parse_time(s: &str) -> Option<f64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return None,
    };
    Some(v * scale).filter(|x| x.is_finite() && *x > 0.0)
}

/// A time in the unit that reads best: `45 s`, `12.5 min`, `2.0 h`.
fn when(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.1} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// A level with three significant digits or more.
fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A share as a signed percentage.
fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// What a call says, in words; `starts` are the judged intervals' starts.
pub fn call_text(c: &Call, starts: &[f64]) -> String {
    let d = &c.drift;
    // A share of zero is no share: a step from 0.1 to 0 reads -100%.
    if d.level == 0.0 {
        return "zero most of the run: not judged".into();
    }
    match &d.verdict {
        Verdict::Flat => "flat".into(),
        Verdict::TooShort => "too few intervals to judge".into(),
        Verdict::Drifting => {
            let dir = if d.over_run.unwrap_or(0.0) >= 0.0 {
                "up"
            } else {
                "down"
            };
            format!("**drifting {dir}**")
        }
        Verdict::Swinging { changes, low, high } => format!(
            "**swinging**: {changes} changes of level back and forth (levels from {} to {} {})",
            num(*low),
            num(*high),
            c.unit
        ),
        Verdict::Stepped(steps) => {
            let each: Vec<String> = steps
                .iter()
                .map(|st| {
                    let at = starts.get(st.at).copied().unwrap_or(0.0);
                    format!("{} at {}", pct(st.share()), when(at))
                })
                .collect();
            format!("**stepped** {}", each.join(", "))
        }
    }
}

/// The verdict as a markdown table, a row per metric, under a line that
/// states the warm-up.
pub fn table(v: &SoakVerdict) -> String {
    let mut out = format!(
        "Warm-up set aside: the first {} intervals ({}), until {}.\n\n",
        v.warmup.segments,
        when(v.warmup.secs),
        v.warmup.why
    );
    out.push_str(
        "| store | metric | median | call | slope over the run | projected over 14 days | smallest drift it could see |\n\
         |---|---|---:|---|---:|---:|---:|\n",
    );
    for c in &v.calls {
        let d = &c.drift;
        // A metric not judged (at zero) has no slope to state either.
        let judged = d.level != 0.0;
        let opt = |x: Option<f64>| x.filter(|_| judged).map_or("-".into(), pct);
        // A step widens the slope's interval (no drift limit to read
        // there) and is no slope to carry forward.
        let stepped = matches!(d.verdict, Verdict::Stepped(_));
        let seeable = d.detectable.filter(|_| judged && !stepped);
        out.push_str(&format!(
            "| {} | {} | {:.3} {} | {} | {} | {} | {} |\n",
            if c.store.is_empty() {
                "(process)"
            } else {
                &c.store
            },
            c.metric,
            d.level,
            c.unit,
            call_text(c, &v.starts),
            opt(d.over_run),
            opt(d.over_horizon.filter(|_| !stepped)),
            seeable.map_or("-".into(), |x| format!("{:.1}%", x * 100.0)),
        ));
    }
    if !v.thin.is_empty() {
        out.push_str(&format!(
            "\nNot judged, an interval held too few samples ({BEYOND} beyond the percentile): {}.\n",
            v.thin.join("; ")
        ));
    }
    out
}
