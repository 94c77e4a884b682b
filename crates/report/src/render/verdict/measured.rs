//! Months measured: a checkpointed run of the month's batches (`--preset
//! month`) whose store is set up as a candidate's is that config's month,
//! run to the end at the run's own scale. It is evidence the prediction
//! cannot give: the batch time of every batch to the horizon, the debt
//! and the lookups at the month's size, and how far the cost model fitted
//! on the run's first batches missed the rest (its out-of-sample error).
//! A month run is not itself a candidate: its batches are smaller than the
//! sweeps' and the month it measures is not the report's full one.

use ledgerbench_results::{BackendRun, StoreSetup};
use serde_json::Value;

use super::debt::{self, Rising};
use super::lookup::MonthLookup;
use super::{MONTH_BATCHES, MONTH_TXS, points, secs};
use crate::render::month::{FIT_BATCHES, is_month, tested};

/// One store of a month run, measured.
#[derive(Clone, Debug)]
pub(super) struct Measured {
    /// The month run's label.
    pub(super) run: String,
    /// Batches it measured.
    pub(super) batches: u32,
    /// All stores' data over memory after its last batch.
    pub(super) ratio: f64,
    /// Mean transactions a batch (the report's month has [`MONTH_TXS`]).
    pub(super) txs_per_batch: f64,
    /// The store's batch seconds (write + flush + compaction), summed.
    pub(super) secs: f64,
    /// The same batches predicted by the model fitted on the first
    /// [`FIT_BATCHES`] (those measured).
    pub(super) predicted: Option<f64>,
    /// The store's lookups timed after the last batch that timed them:
    /// one-step for `txdata`, two-step for the others; existing keys only.
    pub(super) lookup: Option<MonthLookup>,
    /// Its compaction debt, when it rose across the month.
    pub(super) debt: Option<Rising>,
    /// Why it ended before the month's last batch, when it did.
    pub(super) stopped: Option<String>,
}

impl Measured {
    /// The model's error on the month, signed percent of the measured.
    pub(super) fn error_pct(&self) -> Option<f64> {
        let p = self.predicted?;
        (self.secs > 0.0).then(|| (p - self.secs) / self.secs * 100.0)
    }

    /// Its lookups after the month's last batch, when it got that far:
    /// what the lookup bound weighs.
    pub(super) fn lookup_at_month(&self) -> Option<&MonthLookup> {
        self.lookup.as_ref().filter(|l| l.batch == MONTH_BATCHES)
    }

    /// The report's transactions a batch over the run's: `22` for 1/22.
    pub(super) fn scale(&self) -> f64 {
        MONTH_TXS / self.txs_per_batch.max(1.0)
    }

    /// The answer table's cell: `1.5 min (model +70%)`.
    pub(super) fn cell(&self) -> String {
        let mut s = secs(self.secs);
        if let Some(e) = self.error_pct() {
            s.push_str(&format!(" (model {e:+.0}%)"));
        }
        if self.batches < MONTH_BATCHES {
            s.push_str(&format!(", {} of {MONTH_BATCHES} batches", self.batches));
        }
        s
    }

    /// The month in a sentence, for the recommendation's text.
    pub(super) fn text(&self) -> String {
        let mut s = format!(
            "measured to batch {} in `{}` (1/{:.0} of the report's transactions a batch, all data {:.1}x memory at the end): {}",
            self.batches,
            self.run,
            self.scale(),
            self.ratio,
            secs(self.secs)
        );
        if let (Some(p), Some(e)) = (self.predicted, self.error_pct()) {
            s.push_str(&format!(
                ", where the model fitted on its first {FIT_BATCHES} batches predicted {} ({e:+.0}%)",
                secs(p)
            ));
        }
        if let Some(l) = &self.lookup {
            s.push_str(&format!("; GET p99 {} after batch {}", l.text(), l.batch));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!("; it stopped early: {why}"));
        }
        s
    }
}

/// The months measured of the config `run` belongs to in `store`: every
/// month run whose store is set up the same way (backend, durability,
/// settings, compaction after each batch or not), the one reaching the
/// most data per memory first.
pub(super) fn of(
    months: &[&(String, &BackendRun)],
    run: &BackendRun,
    store: &'static str,
) -> Vec<Measured> {
    let Some(setup) = run.stores.iter().find(|s| s.store == store) else {
        return Vec::new();
    };
    let mut v: Vec<Measured> = months
        .iter()
        .filter(|(_, m)| {
            m.stores
                .iter()
                .any(|s| s.store == store && same_setup(s, setup))
                && compacts_each_batch(m, store) == compacts_each_batch(run, store)
        })
        .filter_map(|(l, m)| measure(l, m, store))
        .collect();
    v.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    v
}

/// Every month run among `runs`, each of `store`, for the answer's list.
pub(super) fn all(runs: &[&(String, &BackendRun)], store: &'static str) -> Vec<Measured> {
    runs.iter()
        .filter(|(_, r)| is_month(r))
        .filter_map(|(l, r)| measure(l, r, store))
        .collect()
}

/// One store of a month run; none when it measured too few batches for
/// the model to be tested.
fn measure(label: &str, r: &BackendRun, store: &'static str) -> Option<Measured> {
    let pts = points(r, store);
    let last = pts.last()?;
    let t = tested(label, r, store)?;
    let lookup = r.batches.iter().rev().find_map(|b| {
        let l = b.lookups.as_ref()?;
        let lat = if store == "txdata" {
            l.one_step.as_ref()?
        } else {
            l.two_step.as_ref()?
        };
        Some(MonthLookup {
            found_p99_us: lat.p99_us,
            missing_p99_us: None,
            probes: None,
            source: label.to_string(),
            batch: b.batch,
        })
    });
    Some(Measured {
        run: label.to_string(),
        batches: r.batches.last().map_or(0, |b| b.batch),
        ratio: last.total / last.memory,
        txs_per_batch: pts.iter().map(|p| p.txs).sum::<f64>() / pts.len() as f64,
        secs: t.measured(),
        predicted: Some(t.predicted()),
        lookup,
        debt: debt::rising(label, r, store, None),
        stopped: r.stopped_early.clone().or_else(|| r.error.clone()),
    })
}

/// Whether the run compacted `store` after each batch (the report's
/// protocol) rather than leaving it to the engine.
fn compacts_each_batch(r: &BackendRun, store: &str) -> bool {
    r.batches
        .iter()
        .flat_map(|b| &b.stores)
        .any(|s| s.store == store && s.compact_secs.is_some())
}

/// Whether two stores are set up as one config: the same backend,
/// durability and settings, a setting one of them lacks counting as unset
/// (results of older builds record fewer settings, each added unset).
fn same_setup(a: &StoreSetup, b: &StoreSetup) -> bool {
    a.backend == b.backend && a.durability == b.durability && agree(&a.config, &b.config)
}

fn agree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).all(|k| {
            agree(
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            )
        }),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_an_older_build_did_not_record_counts_as_unset() {
        let old = serde_json::json!({"base": {"bloom": 10, "cache": false}});
        let new = serde_json::json!({"base": {"bloom": 10, "cache": false, "trace_dir": null}});
        assert!(agree(&old, &new) && agree(&new, &old));
        // Set in one, absent in the other: not the same config.
        let traced = serde_json::json!({"base": {"bloom": 10, "cache": false, "trace_dir": "/t"}});
        assert!(!agree(&old, &traced));
        let other = serde_json::json!({"base": {"bloom": 10, "cache": true}});
        assert!(!agree(&old, &other));
    }
}
