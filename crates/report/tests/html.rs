//! The HTML report of the published verdict: every verdict line and every
//! charted series is on the page, charts are inline, nothing is fetched.

use std::path::Path;

use ledgerbench_report::{doc, render};

#[test]
fn the_verdict_page_holds_every_verdict_line_and_series() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/verdict-sweeps-2026-11-22");
    let args = std::fs::read_to_string(dir.join("report.args")).expect("report.args");
    let docs: Vec<_> = args
        .split_whitespace()
        .filter(|a| !a.starts_with("--"))
        .map(|a| doc::load(&dir.join(a)).expect("load"))
        .collect();
    let t = tempfile::tempdir().expect("tempdir");
    // The folder's own options: it merges two kinds of machine on purpose.
    let opts = render::VerdictOptions {
        mixed_machines: args.contains("--mixed-machines"),
        ..render::VerdictOptions::default()
    };
    render::render_html(&docs, t.path(), &opts, false).expect("render");
    let md = std::fs::read_to_string(t.path().join("report.md")).expect("md");
    let html = std::fs::read_to_string(t.path().join("report.html")).expect("html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(
        !html.contains("src=") && !html.contains("<link"),
        "nothing fetched"
    );
    // Every cell of the answer's tables is on the page.
    let answer: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "## The answer")
        .take_while(|l| *l != "## Machines")
        .filter(|l| l.starts_with("| ") && !l.starts_with("|---"))
        .collect();
    assert!(answer.len() > 5, "{answer:?}");
    for row in answer {
        for cell in row.trim_matches('|').split(" | ") {
            let text = cell.trim().trim_matches('`').replace('\'', "&apos;");
            assert!(
                html.contains(&text),
                "`{text}` of the answer is not on the page"
            );
        }
    }
    // Every chart inline, and every run labelled in its legends.
    let charts = md.lines().filter(|l| l.starts_with("![")).count();
    assert_eq!(html.matches("<figure").count(), charts);
    assert_eq!(html.matches("<svg").count(), charts);
    for d in &docs {
        if let doc::Doc::Stellar(r) = &d.doc {
            for run in &r.runs {
                assert!(
                    html.contains(&run.label),
                    "run {} is not on the page",
                    run.label
                );
            }
        }
    }
}
