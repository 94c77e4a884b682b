//! The recommendation per store: the lowest predicted month among configs
//! whose runs all finished and keep every entry, beside the next one, and
//! how far the model's measured error lets the choice be trusted.

use std::fmt::Write;

use super::answer::StoreAnswer;
use super::lookup::Standing;
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
    /// The engine waited for the generator (its background work got that
    /// time free).
    pub(super) harness_bound: bool,
    /// Its lookups at the month's batch count against the bound.
    pub(super) lookup: Standing,
}

/// The recommended run for `store`: the lowest predicted month among runs
/// that finished and meet the lookup bound (`bound_us`, when weighed),
/// beside the next one, and what would change the choice.
///
/// Long because the ranking and the text that explains it are one argument: what was set aside and why, then the pick and its margin.
pub(super) fn recommend(
    store: &'static str,
    mut c: Vec<Candidate>,
    bound_us: Option<f64>,
) -> (String, StoreAnswer) {
    c.sort_by(|a, b| a.month.total_cmp(&b.month));
    let (over, c): (Vec<Candidate>, Vec<Candidate>) = c
        .into_iter()
        .partition(|x| matches!(x.lookup, Standing::Over(_)));
    let picked = StoreAnswer::of(store, &c);
    let overs = over_bound(&over, bound_us);
    let Some(best) = c.first() else {
        return (
            format!(
                "No recommendation for `{store}`: no run finished with a fitted model{}.{overs}\n\n",
                if over.is_empty() {
                    ""
                } else {
                    " within the lookup bound"
                }
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
        "**Recommended for `{store}`: `{}`**, the lowest predicted month ({}) of {} config(s) whose runs all finished and keep every entry{}.",
        best.label,
        secs(best.month),
        c.len(),
        amp(best)
    );
    if let Some(next) = c.get(1) {
        let margin = (next.month / best.month.max(1e-9) - 1.0) * 100.0;
        let _ = write!(
            s,
            " Next: `{}`, {} ({margin:.0}% more){}.",
            next.label,
            secs(next.month),
            amp(next)
        );
        // The choice stands only as far as the model predicts: a margin
        // inside its measured error is not a difference.
        let err = best
            .error_pct
            .into_iter()
            .chain(next.error_pct)
            .fold(0.0, f64::max);
        if err > 50.0 {
            let _ = write!(
                s,
                " Weak evidence: the model missed a held-out batch by {err:.0}%, so the month is a trend, not a figure."
            );
        }
        if err > 0.0 && margin <= err {
            let _ = write!(
                s,
                " The margin is within the model's held-out error ({err:.0}%): on this evidence the two are not told apart."
            );
        } else if err > 0.0 {
            let _ = write!(
                s,
                " It would change if the held-out error ({err:.0}%) grew past the margin at a larger data/memory ratio, or if write or space amplification weighs more than time for this store."
            );
        }
    }
    s.push_str(&lookup_text(best, bound_us));
    s.push_str(&overs);
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
                "`{}` (predicted month {}; GET p99 {} at {MONTH_BATCHES} batches, `{}`)",
                x.label,
                secs(x.month),
                l.text(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(label: &str, month: f64, error_pct: Option<f64>) -> Candidate {
        Candidate {
            label: label.into(),
            month,
            wa: Some(2.0),
            space: None,
            error_pct,
            runs: 1,
            harness_bound: false,
            lookup: Standing::NotApplied,
        }
    }

    #[test]
    fn the_lowest_month_wins_and_a_margin_inside_the_error_is_no_difference() {
        let (r, a) = recommend(
            "txdata",
            vec![cand("b", 105.0, Some(10.0)), cand("a", 100.0, None)],
            None,
        );
        assert_eq!(a.best.as_ref().map(|b| b.label.as_str()), Some("a"));
        assert!(a.reading().contains("not told apart"), "{}", a.reading());
        assert!(r.contains("`txdata`: `a`**"), "{r}");
        assert!(r.contains("Next: `b`") && r.contains("(5% more)"), "{r}");
        assert!(r.contains("not told apart"), "{r}");
        assert!(r.contains("space amplification n/a"), "absent, not 0: {r}");
        let (r, _) = recommend(
            "txdata",
            vec![cand("a", 100.0, Some(80.0)), cand("b", 1000.0, None)],
            None,
        );
        assert!(
            r.contains("Weak evidence") && r.contains("would change"),
            "{r}"
        );
        let mut fast = cand("fast", 10.0, None);
        fast.harness_bound = true;
        let (r, a) = recommend("txdata", vec![fast], None);
        assert!(a.reading().contains("harness-bound"), "{}", a.reading());
        assert!(
            r.contains("harness-bound, so background work had idle time"),
            "{r}"
        );
        let (r, _) = recommend("ledgers", Vec::new(), None);
        assert!(r.contains("No recommendation for `ledgers`"), "{r}");
    }

    #[test]
    fn a_design_over_the_lookup_bound_is_not_recommended_however_fast_it_ingests() {
        use super::super::lookup::MonthLookup;
        let at = |found: f64, missing: f64| MonthLookup {
            found_p99_us: found,
            missing_p99_us: missing,
            probes: Some(118.0),
            source: "fan/rocksdb-partitioned".into(),
        };
        let mut fast = cand("partitioned", 100.0, None);
        fast.lookup = Standing::Over(at(4_000.0, 25_000.0));
        let mut slow = cand("leveled", 300.0, None);
        slow.lookup = Standing::Within(at(1_500.0, 900.0));
        let (r, a) = recommend("txdata", vec![fast.clone(), slow], Some(10_000.0));
        assert_eq!(a.best.as_ref().map(|b| b.label.as_str()), Some("leveled"));
        assert!(r.contains("`txdata`: `leveled`**"), "{r}");
        assert!(
            r.contains("`leveled` measured 1.5 / 0.9 ms") && r.contains("within it"),
            "{r}"
        );
        assert!(
            r.contains("Not recommended, over the lookup bound of 10 ms: `partitioned`")
                && r.contains("4.0 / 25.0 ms"),
            "{r}"
        );
        // Without a bound (no fan-out results) the same candidates rank by
        // ingestion alone.
        let mut plain = fast.clone();
        plain.lookup = Standing::NotApplied;
        let (r, a) = recommend("txdata", vec![plain, cand("leveled", 300.0, None)], None);
        assert_eq!(
            a.best.as_ref().map(|b| b.label.as_str()),
            Some("partitioned")
        );
        assert!(!r.contains("Lookup bound"), "{r}");
        // Nothing within the bound: no recommendation, and why.
        let (r, a) = recommend("txdata", vec![fast], Some(10_000.0));
        assert!(a.best.is_none());
        assert!(r.contains("within the lookup bound"), "{r}");
    }
}
