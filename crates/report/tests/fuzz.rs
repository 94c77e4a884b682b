//! Results files as `ledgerbench report`, `compare` and `export` meet them:
//! any mutation of a real results file is loaded or refused with the file
//! and a line, and whatever loads renders, compares and exports without a
//! panic. Budget: `LEDGERBENCH_FUZZ_INPUTS` / `LEDGERBENCH_FUZZ_SECS`.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use ledgerbench_fuzz::{Budget, fuzz};
use ledgerbench_report::{bencher, compare, doc, metrics, render};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// A real results file with every array cut to its first two elements:
/// every kind of field is still there, and a seed this small mutates and
/// parses thousands of times a second.
fn seed(rel: &str) -> Vec<u8> {
    fn cut(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Array(a) => {
                a.truncate(2);
                a.iter_mut().for_each(cut);
            }
            serde_json::Value::Object(o) => o.values_mut().for_each(cut),
            _ => {}
        }
    }
    let bytes = std::fs::read(repo(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    cut(&mut v);
    serde_json::to_vec_pretty(&v).expect("json")
}

#[test]
fn results_loading_report_compare_and_export() {
    let seeds = vec![
        seed("fixtures/results/stellar-smoke/results.json"),
        seed("fixtures/results/point-reads-small/results.json"),
        seed("results/crash-2026-11-22/limited/results.json"),
    ];
    for s in &seeds {
        doc::parse(Path::new("seed.json"), s).expect("every seed loads");
    }
    // Inputs that once broke a target, kept so they never do again: a
    // batch time of 1e-300 beside 1e300 made the log axis ask for billions
    // of ticks (an abort on allocation, not a panic).
    let mut seeds = seeds;
    seeds.push(
        std::fs::read(repo("fixtures/fuzz/results-600-decades.json")).expect("regression input"),
    );
    let out = tempfile::tempdir().expect("tempdir");
    let rendered = Cell::new(0u64);
    let r = fuzz("results", &seeds, Budget::from_env(), |bytes| {
        let d = match doc::parse(Path::new("fuzz.json"), bytes) {
            Ok(d) => d,
            Err(e) => {
                assert!(e.to_string().starts_with("fuzz.json"), "{e}");
                return false;
            }
        };
        let _ = bencher::export(std::slice::from_ref(&d));
        let _ = bencher::empty_runs(std::slice::from_ref(&d));
        let _ = metrics::extract(&d, None);
        if let Ok(rows) = compare::compare(
            std::slice::from_ref(&d),
            std::slice::from_ref(&d),
            &compare::Options::default(),
        ) {
            let _ = compare::markdown(&rows, &[]);
        }
        // A report writes a dozen files: every eighth loaded input renders.
        let n = rendered.get();
        rendered.set(n + 1);
        if n.is_multiple_of(8) {
            let _ = render::render_with(
                std::slice::from_ref(&d),
                out.path(),
                &render::VerdictOptions::default(),
                true,
            );
        }
        true
    });
    eprintln!("{r}");
    assert!(r.accepted > 0, "no mutated results file loaded");
}
