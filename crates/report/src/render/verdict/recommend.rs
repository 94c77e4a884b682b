//! The recommendation per store: the lowest predicted month among configs
//! whose runs all finished, keep every entry, meet the lookup bound and
//! showed no rising compaction debt, beside the next one, and how far the model's
//! measured error lets the choice be trusted.

use std::fmt::Write;

use super::answer::StoreAnswer;
use super::debt::Rising;
use super::lookup::Standing;
use super::measured::Measured;
use super::{MONTH_BATCHES, secs};
use crate::render::opt;

/// A run that finished, with what the recommendation weighs.
#[derive(Clone)]
pub(super) struct Candidate {
    pub(super) label: String,
    /// Predicted month, seconds.
    pub(super) month: f64,
    pub(super) wa: Option<f64>,
    pub(super) space: Option<f64>,
    /// The held-out prediction's error of its group, percent.
    pub(super) error_pct: Option<f64>,
    /// Runs of the config (memory limits of a sweep) the month is fitted on.
    pub(super) runs: usize,
    /// Batches of those runs, all told.
    pub(super) batches: usize,
    /// The engine waited for the generator (its background work got that
    /// time free).
    pub(super) harness_bound: bool,
    /// Its lookups at the month's batch count against the bound.
    pub(super) lookup: Standing,
    /// The run of the config whose compaction debt rose the most across
    /// its batches, when any rose.
    pub(super) debt: Option<Rising>,
    /// Its month measured (the month run reaching the most data per
    /// memory), when one ran.
    pub(super) measured: Option<Measured>,
}

impl Candidate {
    /// The model's out-of-sample error on its measured month, percent.
    pub(super) fn month_error(&self) -> Option<f64> {
        self.measured.as_ref()?.error_pct().map(f64::abs)
    }
}

/// The larger error of the model over `c`: a held-out batch inside the
/// fitted range, or a measured month out of it; with which it was.
pub(super) fn model_error<'a>(
    c: impl IntoIterator<Item = &'a Candidate> + Clone,
) -> Option<(f64, &'static str)> {
    let held = c.clone().into_iter().filter_map(|x| x.error_pct);
    let month = c.into_iter().filter_map(Candidate::month_error);
    let held = held.reduce(f64::max).map(|e| (e, "a held-out batch"));
    let month = month.reduce(f64::max).map(|e| (e, "the measured month"));
    match (held, month) {
        (Some(h), Some(m)) => Some(if m.0 > h.0 { m } else { h }),
        (h, m) => h.or(m),
    }
}

/// The recommended run for `store`: the lowest predicted month among runs
/// that finished, meet the lookup bound (`bound_us`, when weighed) and
/// whose compaction debt did not rise, beside the next one, and what would
/// change the choice.
///
/// Long because the ranking and the text that explains it are one argument: what was set aside and why, then the pick and its margin.
pub(super) fn recommend(
    store: &str,
    word: &'static str,
    mut c: Vec<Candidate>,
    bound_us: Option<f64>,
) -> (String, StoreAnswer) {
    c.sort_by(|a, b| a.month.total_cmp(&b.month));
    let is_over = |x: &Candidate| matches!(x.lookup, Standing::Over(_));
    let (aside, c): (Vec<Candidate>, Vec<Candidate>) =
        c.into_iter().partition(|x| is_over(x) || x.debt.is_some());
    let mut picked = StoreAnswer::of(store, word, &c);
    picked.behind = aside
        .iter()
        .filter(|x| x.debt.is_some())
        .map(|x| x.label.clone())
        .collect();
    let over: Vec<Candidate> = aside.iter().filter(|&x| is_over(x)).cloned().collect();
    picked.over = over.iter().map(|x| x.label.clone()).collect();
    let overs = over_bound(&over, bound_us);
    let behind = fell_behind(&aside, word);
    let Some(best) = c.first() else {
        let mut within = Vec::new();
        if !over.is_empty() {
            within.push(" within the lookup bound");
        }
        if !behind.is_empty() {
            within.push(" without rising compaction debt");
        }
        return (
            format!(
                "No recommendation for `{store}`: no run finished with a fitted model{}.{overs}{behind}\n\n",
                within.join(" and")
            ),
            picked,
        );
    };
    let amp = |x: &Candidate| {
        let over = if x.runs > 1 {
            format!(
                " (fitted over its {} memory limits; amplification at the smallest)",
                x.runs
            )
        } else {
            String::new()
        };
        let bound = if x.harness_bound {
            "; harness-bound, so background work had idle time a node ingesting at full speed would not give it"
        } else {
            ""
        };
        format!(
            "{over}; write amplification {}, space amplification {}{bound}",
            opt(x.wa, 2),
            opt(x.space, 2)
        )
    };
    let mut s = format!(
        "**Recommended for `{store}`: `{}`**, the lowest predicted {word} ({}) of {} config(s) whose runs all finished, keep every entry{} and showed no rising compaction debt{}.",
        best.label,
        secs(best.month),
        c.len(),
        if bound_us.is_some() {
            ", meet the lookup bound"
        } else {
            ""
        },
        amp(best)
    );
    if let Some(m) = &best.measured {
        let _ = write!(s, " Its month was {}.", m.text());
    }
    if let Some(next) = c.get(1) {
        let margin = (next.month / best.month.max(1e-9) - 1.0) * 100.0;
        let _ = write!(
            s,
            " Next: `{}`, {} ({margin:.0}% more){}.",
            next.label,
            secs(next.month),
            amp(next)
        );
        if let Some(m) = &next.measured {
            let _ = write!(s, " Its month was {}.", m.text());
        }
        // The choice stands only as far as the model predicts: a margin
        // inside its measured error is not a difference.
        let (err, on) = model_error([best, next]).unwrap_or((0.0, "a held-out batch"));
        // Past the margin, even a large error cannot undo the choice (the
        // answer's reading says the same).
        if err > 50.0 && margin <= err {
            let _ = write!(
                s,
                " Weak evidence: the model missed {on} by {err:.0}%, so the {word} is a trend, not a figure."
            );
        } else if err > 50.0 {
            let _ = write!(
                s,
                " The {word}s are trends, not figures (the model missed {on} by {err:.0}%), but the margin is past that error."
            );
        }
        if err > 0.0 && margin <= err {
            let _ = write!(
                s,
                " The margin is within the model's error ({err:.0}%, on {on}): on this evidence the two are not told apart."
            );
        } else if err > 0.0 {
            let _ = write!(
                s,
                " It would change if the model's error ({err:.0}%, on {on}) grew past the margin at a larger data/memory ratio, or if write or space amplification weighs more than time for this store."
            );
        }
    }
    s.push_str(&lookup_text(best, bound_us));
    s.push_str(&overs);
    s.push_str(&behind);
    s.push_str("\n\n");
    (s, picked)
}

/// What the recommended config's lookups cost at the month's count.
fn lookup_text(best: &Candidate, bound_us: Option<f64>) -> String {
    let Some(bound) = bound_us else {
        return String::new();
    };
    let head = format!(
        " Lookup bound: a GET p99 of at most {:.0} ms, existing and missing keys, at the month's {MONTH_BATCHES} batches",
        bound / 1e3
    );
    match &best.lookup {
        // Over-bound candidates never reach here: they were set aside.
        Standing::NotApplied | Standing::Over(_) => String::new(),
        Standing::NotMeasured => format!(
            "{head}: `{}` was not measured there (no fan-out run of its backend with its settings), so the bound does not decide it.",
            best.label
        ),
        Standing::Within(l) if l.missing_p99_us.is_none() => format!(
            "{head}: `{}` measured {} after batch {} of its month (`{}`), within it.",
            best.label,
            l.text(),
            l.batch,
            l.source
        ),
        Standing::Within(l) => format!(
            "{head}: `{}` measured {} (existing / missing{}, `{}`), within it.",
            best.label,
            l.text(),
            l.probes.map_or(String::new(), |p| format!(
                "; {p:.0} databases probed per GET"
            )),
            l.source
        ),
    }
}

/// The configs the lookup bound ruled out, with what they measured.
fn over_bound(over: &[Candidate], bound_us: Option<f64>) -> String {
    let (Some(bound), false) = (bound_us, over.is_empty()) else {
        return String::new();
    };
    let each: Vec<String> = over
        .iter()
        .filter_map(|x| match &x.lookup {
            Standing::Over(l) => Some(format!(
                "`{}` (predicted month {}; GET p99 {} at {} batches, `{}`)",
                x.label,
                secs(x.month),
                l.text(),
                l.batch,
                l.source
            )),
            _ => None,
        })
        .collect();
    format!(
        " Not recommended, over the lookup bound of {:.0} ms: {}.",
        bound / 1e3,
        each.join(", ")
    )
}

/// The configs set aside because their compaction debt rose, with the run
/// and the rise.
fn fell_behind(aside: &[Candidate], word: &str) -> String {
    let each: Vec<String> = aside
        .iter()
        .filter_map(|x| {
            let d = x.debt.as_ref()?;
            Some(format!(
                "`{}` (predicted {word} {}; {})",
                x.label,
                secs(x.month),
                d.text()
            ))
        })
        .collect();
    if each.is_empty() {
        return String::new();
    }
    format!(
        " Not recommended, compaction fell behind (the debt rose across the run, so the {word}, predicted from batch times, leaves out work the engine deferred): {}.",
        each.join(", ")
    )
}

#[cfg(test)]
mod tests;
