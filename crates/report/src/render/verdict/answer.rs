//! The answer a reader came for, in one screen: per store the recommended
//! config, the runner-up and the margin against the model's held-out error,
//! what the runs rest on (durability, memory limits, data/memory), and how
//! much each config's batches grew. It opens the report, and `ledgerbench
//! report --summary` prints it for the README.

use std::collections::BTreeSet;
use std::fmt::Write;

use ledgerbench_results::BackendRun;

use super::growth::{Growth, range};
use super::measured::Measured;
use super::recommend::{Candidate, model_error};
use super::{harness_wait, secs};

/// One store's recommendation.
pub struct StoreAnswer {
    store: String,
    /// The horizon's word (`month`, `horizon`).
    word: &'static str,
    /// The recommended config, when any run finished with a fitted model.
    pub(super) best: Option<Candidate>,
    pub(super) next: Option<Candidate>,
    /// Configs set aside because their compaction debt rose.
    pub(super) behind: Vec<String>,
    /// Configs set aside because their GETs at the month were over the
    /// lookup bound.
    pub(super) over: Vec<String>,
}

impl StoreAnswer {
    /// From the candidates of `store`, lowest predicted month first.
    pub(super) fn of(store: &str, word: &'static str, sorted: &[Candidate]) -> Self {
        Self {
            store: store.to_string(),
            word,
            best: sorted.first().cloned(),
            next: sorted.get(1).cloned(),
            behind: Vec::new(),
            over: Vec::new(),
        }
    }

    /// The larger held-out error of the two compared, percent.
    fn held_out(&self) -> Option<f64> {
        let errs = self
            .best
            .iter()
            .chain(&self.next)
            .filter_map(|c| c.error_pct);
        errs.reduce(f64::max)
    }

    /// The model's larger error over the two compared (held out, or on a
    /// measured month), and on what.
    fn error(&self) -> Option<(f64, &'static str)> {
        model_error(self.best.iter().chain(&self.next))
    }

    fn margin(&self) -> Option<f64> {
        let (b, n) = (self.best.as_ref()?, self.next.as_ref()?);
        Some((n.month / b.month.max(1e-9) - 1.0) * 100.0)
    }

    /// How far the choice can be trusted, in a few words.
    pub(super) fn reading(&self) -> String {
        let Some(best) = &self.best else {
            if !self.behind.is_empty() {
                return "none: every config that finished fell behind in compaction or is over the lookup bound".into();
            }
            return "no run finished with a fitted model".into();
        };
        let error = self.error();
        // Which error it was, in the words of the answer's columns.
        let name = match error {
            Some((_, "the measured month")) => "error on the measured month",
            _ => "held-out error",
        };
        let mut r = match (self.margin(), error.map(|e| e.0)) {
            // A margin past even a large error cannot be undone by it.
            (Some(m), Some(e)) if m > e && e > 50.0 => {
                format!(
                    "clear on this evidence, though the {}s are trends ({name} {e:.0}%)",
                    self.word
                )
            }
            (_, Some(e)) if e > 50.0 => format!("weak evidence: {name} {e:.0}%"),
            (Some(m), Some(e)) if m <= e => "within the model's error: not told apart".into(),
            (Some(_), _) => "clear on this evidence".into(),
            (None, _) => "the only config measured".into(),
        };
        if best.harness_bound {
            r.push_str("; harness-bound (background work had idle time)");
        }
        r
    }
}

/// The answer of a verdict: per store, and what it rests on.
pub struct Answer {
    /// Per store, in the report's order.
    pub(super) stores: Vec<StoreAnswer>,
    /// Per store and config.
    pub(super) growth: Vec<Growth>,
    runs: usize,
    durability: BTreeSet<String>,
    limits: BTreeSet<u64>,
    ratio: Option<(f64, f64)>,
    harness_bound: usize,
    /// The lookup bound, microseconds, when fan-out runs were weighed.
    pub(super) lookup_bound_us: Option<f64>,
    /// One table row per capacity search among the results.
    pub(crate) capacity: Vec<String>,
    /// `txdata` of every month run among the results.
    pub(super) months: Vec<Measured>,
    /// Which runs came from which kind of machine, when the reader merged
    /// different hardware on purpose (`--mixed-machines`).
    pub(crate) machines: Option<String>,
    /// The workload's stores and horizon.
    shape: super::Shape,
}

impl Answer {
    /// What the memory-limited runs rest on; the stores fill in after.
    pub(super) fn of(limited: &[&(String, &BackendRun)], shape: &super::Shape) -> Self {
        let mut durability = BTreeSet::new();
        let mut limits = BTreeSet::new();
        let mut ratios = Vec::new();
        for (_, r) in limited {
            for s in &r.stores {
                durability.insert(s.durability.map_or("unrecorded".into(), |d| d.to_string()));
            }
            limits.extend(r.memory_limit_bytes);
            // All stores' data over memory after the last batch.
            if let Some(p) = super::points_in(r, shape.ratio_store(), shape.load.as_deref()).last()
            {
                ratios.push(p.total / p.memory);
            }
        }
        Self {
            stores: Vec::new(),
            growth: Vec::new(),
            runs: limited.len(),
            durability,
            limits,
            ratio: range(&ratios),
            harness_bound: limited
                .iter()
                .filter(|(_, r)| harness_wait(r).is_some())
                .count(),
            lookup_bound_us: None,
            capacity: Vec::new(),
            months: Vec::new(),
            machines: None,
            shape: shape.clone(),
        }
    }

    /// The runs' durability levels, as code spans.
    fn levels(&self) -> String {
        let v: Vec<String> = self.durability.iter().map(|d| format!("`{d}`")).collect();
        v.join(", ")
    }

    /// The runs' memory limits, in MiB.
    fn limit_list(&self) -> String {
        let v: Vec<String> = self
            .limits
            .iter()
            .map(|b| format!("{} MiB", b >> 20))
            .collect();
        v.join(", ")
    }

    /// The table of picks, one row per store; with month runs among the
    /// results, each pick's measured month beside its predicted one.
    fn picks_table(&self, s: &mut String) {
        let lookups = self.lookup_bound_us.is_some();
        let months = !self.months.is_empty();
        let _ = write!(s, "| store | recommended | {} predicted |", self.shape.word);
        if months {
            s.push_str(" month measured, its scale |");
        }
        s.push_str(" runner-up | margin | held-out error | reading |");
        if lookups {
            s.push_str(" GET p99 at a month |");
        }
        s.push_str("\n|---|---|---:|");
        if months {
            s.push_str("---:|");
        }
        s.push_str("---|---:|---:|---|");
        s.push_str(if lookups { "---:|\n" } else { "\n" });
        for a in &self.stores {
            let name = |c: &Option<Candidate>| {
                c.as_ref()
                    .map_or("none".into(), |c| format!("`{}`", c.label))
            };
            let predicted = a.best.as_ref().map_or("n/a".into(), |c| {
                if months {
                    format!("{}, from {} batches", secs(c.month), c.batches)
                } else {
                    secs(c.month)
                }
            });
            let _ = write!(s, "| `{}` | {} | {predicted} |", a.store, name(&a.best));
            if months {
                let cell = a.best.as_ref().map_or("n/a".into(), |c| {
                    c.measured.as_ref().map_or("not run".into(), Measured::cell)
                });
                let _ = write!(s, " {cell} |");
            }
            let _ = write!(
                s,
                " {} | {} | {} | {} |",
                name(&a.next),
                a.margin().map_or("n/a".into(), |m| format!("+{m:.0}%")),
                a.held_out().map_or("n/a".into(), |e| format!("{e:.0}%")),
                a.reading()
            );
            if lookups {
                let cell = a.best.as_ref().map_or("n/a".into(), |c| c.lookup.cell());
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
    }

    /// The month runs' `txdata` in one line: measured, the model's error
    /// on it, the lookups and the debt; `None` without month runs.
    fn months_line(&self) -> Option<String> {
        let first = self.months.first()?;
        let each: Vec<String> = self
            .months
            .iter()
            .map(|m| {
                let mut e = format!("`{}` {}", m.run, secs(m.secs));
                let mut notes: Vec<String> = vec![format!("data {:.1}x memory", m.ratio)];
                if let Some(err) = m.error_pct() {
                    notes.push(format!("model {err:+.0}%"));
                }
                if let Some(l) = &m.lookup {
                    notes.push(format!("GET p99 {} at batch {}", l.text(), l.batch));
                }
                if m.debt.is_some() {
                    notes.push("debt rising".into());
                }
                if m.batches < super::MONTH_BATCHES {
                    notes.push(format!("stopped after batch {}", m.batches));
                }
                e.push_str(&format!(" ({})", notes.join("; ")));
                e
            })
            .collect();
        Some(format!(
            "Months measured for `txdata` (`--preset month`: {} batches of 1/{:.0} of the report's transactions, all stores' data over memory at the end as given; the model fitted on each run's first {} batches against the rest): {}.",
            super::MONTH_BATCHES,
            first.scale(),
            crate::render::month::FIT_BATCHES,
            each.join(", ")
        ))
    }

    /// The configs set aside because their compaction fell behind, per
    /// store, or `None` when there were none.
    fn behind(&self) -> Option<String> {
        Self::per_store(self.stores.iter().map(|a| (a.store.as_str(), &a.behind)))
    }

    /// `store`: `a`, `b`; ... for the stores with any, or `None`.
    fn per_store<'a>(lists: impl Iterator<Item = (&'a str, &'a Vec<String>)>) -> Option<String> {
        let all: Vec<String> = lists
            .filter(|(_, l)| !l.is_empty())
            .map(|(store, l)| {
                let each: Vec<String> = l.iter().map(|l| format!("`{l}`")).collect();
                format!("`{store}`: {}", each.join(", "))
            })
            .collect();
        (!all.is_empty()).then(|| all.join("; "))
    }

    /// The answer for a front page (`ledgerbench report --summary --brief`):
    /// the table of picks and one line per caveat, each pointing to the
    /// full answer for its figures.
    pub fn brief_markdown(&self) -> String {
        let mut s = String::new();
        self.picks_table(&mut s);
        s.push('\n');
        let _ = writeln!(
            s,
            "- Rests on {} runs at durability {} under {}{}; {}",
            self.runs,
            self.levels(),
            self.limit_list(),
            self.ratio.map_or(String::new(), |(a, b)| format!(
                " (data {a:.1}x to {b:.1}x memory)"
            )),
            if self.months.is_empty() {
                if self.shape.stellar {
                    "the month is predicted by a cost model, not measured."
                } else {
                    "the horizon is predicted by a cost model, not measured."
                }
            } else {
                "the report's month is predicted by a cost model from each config's batches (the count beside each), and measured at a smaller scale where a month run exists."
            }
        );
        if let Some(m) = self.months_line() {
            let _ = writeln!(s, "- {m}");
        }
        if self.harness_bound > 0 {
            let _ = writeln!(
                s,
                "- {} of them harness-bound: the engine waited for generated data, so background compaction had idle time.",
                self.harness_bound
            );
        }
        if self.machines.is_some() {
            s.push_str("- The runs come from more than one kind of machine: some designs are compared across hardware.\n");
        }
        if let Some(b) = self.lookup_bound_us {
            let _ = writeln!(
                s,
                "- A `txdata` design must keep GET p99 within {:.0} ms at {} batches (the last column).",
                b / 1e3,
                super::MONTH_BATCHES
            );
        }
        if let Some(behind) = self.behind() {
            let _ = writeln!(s, "- Set aside, compaction fell behind: {behind}.");
        }
        // Only with month runs: a month can put a config over the bound
        // that no fan-out run did, and the reader should see which.
        if let Some(over) = Self::per_store(self.stores.iter().map(|a| (a.store.as_str(), &a.over)))
            .filter(|_| !self.months.is_empty())
        {
            let _ = writeln!(
                s,
                "- Set aside, GET p99 over the lookup bound at a month (the worse of a fan-out run's and the config's own month): {over}."
            );
        }
        if !self.capacity.is_empty() {
            let _ = writeln!(
                s,
                "- The sustainable rate at a close interval (`ledgerbench run capacity`, {} searches) is in the full answer.",
                self.capacity.len()
            );
        }
        s
    }

    /// The answer as markdown, at most about 40 lines; `heading` adds the
    /// section heading and the pointer to the details (the report, not the
    /// README).
    ///
    /// Long because it is the answer's text in reading order: what it rests on, the table of picks per store, the growth table, the capacity searches, then how to read them.
    pub fn markdown(&self, heading: bool) -> String {
        let mut s = String::new();
        if heading {
            s.push_str("## The answer\n\n");
        }
        let _ = writeln!(
            s,
            "From {} runs at durability {}, under memory limits of {}{}; {} of them harness-bound \
             (the engine waited for generated data over 10% of batch time, so background compaction had idle time).\n",
            self.runs,
            self.levels(),
            self.limit_list(),
            self.ratio.map_or(String::new(), |(a, b)| format!(
                " (all stores' data {a:.1}x to {b:.1}x memory after the last batch)"
            )),
            self.harness_bound
        );
        if let Some(m) = &self.machines {
            let _ = writeln!(s, "{m}\n");
        }
        if let Some(b) = self.lookup_bound_us {
            let _ = writeln!(
                s,
                "Lookup bound: a `txdata` design is recommended only if a GET of an existing and of a missing hash stays within {:.0} ms p99 \
                 at the month's {} batches (`ledgerbench run fan-out`); the column gives the recommended design's measured p99, existing / missing{}.\n",
                b / 1e3,
                super::MONTH_BATCHES,
                if self.months.is_empty() {
                    ""
                } else {
                    " (existing keys only where a month run timed them after its last batch)"
                }
            );
        }
        self.picks_table(&mut s);
        if let Some(m) = self.months_line() {
            let _ = writeln!(s, "\n{m}");
        }
        if let Some(behind) = self.behind() {
            let _ = writeln!(
                s,
                "\nNot recommended, compaction fell behind (pending compaction bytes rose across a run; the verdict section gives each rise): {behind}."
            );
        }
        s.push_str("\nHow much a batch grew, last batch over first (range over the memory limits; flat is 1.0x):\n\n");
        super::growth::table(&self.growth, &self.shape.stores, &mut s);
        if !self.capacity.is_empty() {
            // A prefilled search says so in its row (`--prefill`).
            let start = if self.capacity.iter().any(|r| r.contains("already stored")) {
                "each probe on an empty store or on one already holding what its row says"
            } else {
                "each probe on an empty store"
            };
            let _ = write!(
                s,
                "\nSustainable rate at a close interval (`ledgerbench run capacity`): the highest rows per second each backend persisted close after close \
                 within the interval, neither persist time nor compaction debt growing, {start}; in brackets the lowest rate that failed.\n\n\
                 | rows | close | memory limit | durability | sustained rows/s, highest first |\n|---|---:|---:|---|---|\n",
            );
            for row in &self.capacity {
                s.push_str(row);
                s.push('\n');
            }
        }
        if heading {
            let _ = write!(
                s,
                "\n{} predicted by the cost model fitted to each config; \
                 what would change each choice, every run and the model's held-out check are in the verdict section below.\n\n",
                self.shape.horizon
            );
        }
        s
    }
}
