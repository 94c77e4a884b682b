//! Counters that vary between identical runs. An engine that compacts or
//! flushes in the background on its own clock (Pebble, Badger) writes a
//! different number of bytes in two runs of the same binary and seed, so a
//! tight counter threshold between one run a side is a false alarm. Such a
//! counter is judged like a timing, by the bootstrap interval of its runs,
//! once each side has enough of them; before that it is shown, not judged,
//! with the spread that was seen.
//!
//! Two sources say a counter varies: the runs themselves (a side whose
//! repeats differ), and `counter-noise.json`, measured by
//! `scripts/counter-noise.sh` from repeated identical runs of every engine,
//! for comparisons of one run a side.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::{Samples, glob, same_floor};

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
}
