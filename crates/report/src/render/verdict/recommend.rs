//! The recommendation per store: the lowest predicted month among configs
//! whose runs all finished and keep every entry, beside the next one, and
//! how far the model's measured error lets the choice be trusted.

use std::fmt::Write;

use super::answer::StoreAnswer;
use super::secs;
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
}

/// The recommended run for `store`: the lowest predicted month among runs
/// that finished, beside the next one, and what would change the choice.
pub(super) fn recommend(store: &'static str, mut c: Vec<Candidate>) -> (String, StoreAnswer) {
    c.sort_by(|a, b| a.month.total_cmp(&b.month));
    let picked = StoreAnswer::of(store, &c);
    let Some(best) = c.first() else {
        return (
            format!("No recommendation for `{store}`: no run finished with a fitted model.\n\n"),
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
    s.push_str("\n\n");
    (s, picked)
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
        }
    }

    #[test]
    fn the_lowest_month_wins_and_a_margin_inside_the_error_is_no_difference() {
        let (r, a) = recommend(
            "txdata",
            vec![cand("b", 105.0, Some(10.0)), cand("a", 100.0, None)],
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
        );
        assert!(
            r.contains("Weak evidence") && r.contains("would change"),
            "{r}"
        );
        let mut fast = cand("fast", 10.0, None);
        fast.harness_bound = true;
        let (r, a) = recommend("txdata", vec![fast]);
        assert!(a.reading().contains("harness-bound"), "{}", a.reading());
        assert!(
            r.contains("harness-bound, so background work had idle time"),
            "{r}"
        );
        let (r, _) = recommend("ledgers", Vec::new());
        assert!(r.contains("No recommendation for `ledgers`"), "{r}");
    }
}
