//! The comparison as markdown: what failed first, every metric in a fold.

use std::fmt::Write;

use super::*;

fn num(v: Option<f64>) -> String {
    match v {
        None => "absent".into(),
        // Counters (bytes, entries) are whole: printed whole, as read.
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Some(x) if x.abs() >= 1e6 => format!("{x:.1}"),
        Some(x) if x != 0.0 && x.abs() < 1e-3 => format!("{x:.3e}"),
        Some(x) => format!("{x:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
    }
}

/// A verdict or class as the flags and the JSON spell it (`not-judged`,
/// `counter`), not as Rust names it.
fn name<T: serde::Serialize + std::fmt::Debug>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| j.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{v:?}"))
}

fn table_rows(s: &mut String, rows: &[&Row]) {
    s.push_str("| run | metric | class | baseline | current | change | 95% interval | verdict |\n|---|---|---|---:|---:|---:|---|---|\n");
    for r in rows {
        let change = r
            .ratio
            .map_or("n/a".into(), |x| format!("{:+.2}%", (x - 1.0) * 100.0));
        let iv = r.interval.map_or(String::new(), |(a, b)| {
            format!("{:+.1}% .. {:+.1}%", (a - 1.0) * 100.0, (b - 1.0) * 100.0)
        });
        let verdict = match (name(&r.verdict), &r.note) {
            (v, Some(n)) => format!("{v} ({n})"),
            (v, None) => v,
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.run,
            r.name,
            name(&r.class),
            num(r.baseline),
            num(r.current),
            change,
            iv,
            verdict
        );
    }
}

/// The comparison as markdown: failures and improvements first, then everything.
pub fn markdown(rows: &[Row], machine_notes: &[String]) -> String {
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let mut s = format!(
        "## ledgerbench compare\n\n{} metrics: {} regressed, {} changed (exact), {} fell (counters), {} improved, {} same, {} not judged, {} on one side only (judged).\n\n",
        rows.len(),
        count(Verdict::Regressed),
        count(Verdict::Changed),
        count(Verdict::Fell),
        count(Verdict::Improved),
        count(Verdict::Same),
        count(Verdict::NotJudged),
        count(Verdict::Missing)
    );
    if !machine_notes.is_empty() {
        let _ = writeln!(
            s,
            "Machines differ, so timings are shown but not judged: {}.\n",
            machine_notes.join("; ")
        );
    }
    let notable: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            matches!(
                r.verdict,
                Verdict::Regressed
                    | Verdict::Changed
                    | Verdict::Fell
                    | Verdict::Improved
                    | Verdict::Missing
            )
        })
        .collect();
    if notable.is_empty() {
        s.push_str("No metric moved past its threshold.\n\n");
    } else {
        s.push_str("### Past their thresholds\n\n");
        table_rows(&mut s, &notable);
        s.push('\n');
    }
    s.push_str("<details><summary>All metrics</summary>\n\n");
    table_rows(&mut s, &rows.iter().collect::<Vec<_>>());
    s.push_str("\n</details>\n");
    s
}
