//! The state-trie answer and the db_bench staples, rendered from the
//! committed fixtures: the arithmetic of every derived column, a root that
//! differs from its reference called out, db_bench's own line layout.

use std::path::{Path, PathBuf};

use ledgerbench_report::doc::{self, Doc};
use ledgerbench_report::render::{micro_line, micro_summary, trie_answer, trie_summary};
use ledgerbench_results::trie::TrieResults;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/results")
        .join(name)
}

fn trie() -> TrieResults {
    match doc::load(&fixture("trie-small")).expect("load").doc {
        Doc::Trie(t) => *t,
        _ => panic!("not a trie results file"),
    }
}

fn cells<'a>(table: &'a str, first: &str, second: &str) -> Vec<&'a str> {
    table
        .lines()
        .find(|l| {
            l.starts_with(&format!("| {first} | {second} |"))
                || l.contains(&format!("| {first} | {second} |"))
        })
        .unwrap_or_else(|| panic!("no row {first} {second} in\n{table}"))
        .split('|')
        .map(str::trim)
        .collect()
}

#[test]
fn the_trie_answer_is_levels_times_a_flat_get_against_what_the_walk_read() {
    let t = trie();
    let answer = trie_answer(&[&t]).expect("an answer");
    for run in &t.runs {
        let steady = &run.blocks[run.blocks.len() / 2..];
        let n = steady.len() as f64;
        let levels: f64 = steady.iter().map(|b| b.trie.gets_per_read).sum::<f64>() / n;
        let flat: f64 = steady
            .iter()
            .map(|b| b.flat.device_reads_per_read.expect("device"))
            .sum::<f64>()
            / n;
        let walk: f64 = steady
            .iter()
            .map(|b| b.trie.device_reads_per_read.expect("device"))
            .sum::<f64>()
            / n;
        let row = cells(&answer, &run.backend, &run.scheme);
        // | accounts | backend | scheme | log16 N | levels | flat | estimate | measured | ratio | cached |
        assert_eq!(row[1], "3000", "{row:?}");
        assert_eq!(row[4], "2.9", "log16 3000");
        assert_eq!(row[5], format!("{levels:.2}"));
        assert_eq!(row[6], format!("{flat:.2}"));
        assert_eq!(row[7], format!("{:.2}", flat * levels));
        assert_eq!(row[8], format!("{walk:.2}"));
        assert!(
            row[10].ends_with(&format!(
                "of {}",
                steady
                    .iter()
                    .map(|b| b.trie.levels.len())
                    .max()
                    .expect("levels")
            )),
            "{row:?}"
        );
    }
}

#[test]
fn a_final_root_unlike_its_reference_is_called_out() {
    let mut t = trie();
    let s = trie_summary(&t);
    assert_eq!(s.matches("| matches |").count(), t.runs.len(), "{s}");
    t.runs[0].reference_root = Some("00".repeat(32));
    let s = trie_summary(&t);
    assert!(s.contains("| DIFFERS |"), "{s}");
    // Figures a run has no device for are n/a, never 0.
    for b in &mut t.runs[0].blocks {
        b.flat.device_reads_per_read = None;
    }
    let a = trie_answer(&[&t]).expect("answer");
    let row = cells(&a, &t.runs[0].backend, &t.runs[0].scheme);
    assert_eq!((row[6], row[7], row[9]), ("n/a", "n/a", "n/a"), "{row:?}");
}

#[test]
fn micro_lines_are_in_db_bench_layout() {
    let Doc::Micro(m) = doc::load(&fixture("micro-small")).expect("load").doc else {
        panic!("not a micro results file");
    };
    let rr = m.runs[0]
        .benchmarks
        .iter()
        .find(|b| b.name == "readrandom")
        .expect("readrandom");
    let line = micro_line(rr);
    let want = format!(
        "readrandom   : {:>11.3} micros/op {} ops/sec;",
        rr.micros_per_op, rr.ops_per_sec as u64
    );
    assert!(line.starts_with(&want), "{line}");
    assert!(
        line.ends_with(&format!(
            "({} of {} found)",
            rr.found.expect("found"),
            rr.ops
        )),
        "{line}"
    );
    let s = micro_summary(&m);
    for b in ledgerbench_results::micro::BENCHMARKS {
        assert!(
            s.contains(&format!("| {b} | {} |", m.runs[0].backend)),
            "{b}: {s}"
        );
    }
}
