//! Arguments that make each subcommand valid and quick, shared by the tests
//! that walk every subcommand (bad arguments, closed pipes).

use std::path::Path;

use super::{ledgerbench, stderr};

/// A path under the repository's `fixtures/`.
pub fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// The arguments that make a subcommand valid apart from the flag under
/// test, and where in them the flag goes; a subcommand not named here is
/// tried with none (its error then says what it needs, which is clean too).
pub fn base(path: &[String]) -> (Vec<String>, usize) {
    let results = fixture("results/stellar-smoke");
    let pubnet = fixture("stellar-pubnet");
    let ab_json = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../results/ab-2026-11-26/gate/planted-1.json")
        .display()
        .to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let key: Vec<&str> = path.iter().map(String::as_str).collect();
    let args = match key.as_slice() {
        ["run", "stellar"] => s(&["run", "stellar", "--preset", "smoke"]),
        ["run", "point-reads"] => s(&["run", "point-reads", "--keys", "1000"]),
        ["run", "fan-out"] => s(&[
            "run",
            "fan-out",
            "--keys-per-batch",
            "1000",
            "--batches",
            "1",
        ]),
        ["run", "trie"] => s(&[
            "run",
            "trie",
            "--accounts",
            "1000",
            "--blocks",
            "1",
            "--backends",
            "mem",
        ]),
        ["run", "micro"] => s(&["run", "micro", "--num", "1000", "--backends", "mem"]),
        ["run", "capacity"] => s(&["run", "capacity", "--backends", "mem", "--probes", "2"]),
        ["run", "replay"] => s(&["run", "replay", "seed.kvtrace"]),
        ["run", "soak"] => s(&[
            "run",
            "soak",
            "blobs",
            "--duration",
            "1s",
            "--interval",
            "100ms",
            "--param",
            "value_bytes=1024",
        ]),
        ["run", "synth"] => {
            let model = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../examples/workloads/cosmos.toml")
                .display()
                .to_string();
            s(&["run", "synth", "--workload", &model, "--scale", "0.001x"])
        }
        ["fit"] => {
            let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/rocksdb-trace/6-mixgraph.trace")
                .display()
                .to_string();
            s(&["fit", &trace, "--scan-length", "10", "--out", "new.toml"])
        }
        ["record"] => s(&["record", "ycsb", "--out", "new.kvtrace"]),
        ["import"] => s(&["import", "galexie", &pubnet, "--out", "new.kvtrace"]),
        ["calibrate"] => s(&["calibrate", "stellar", &pubnet]),
        ["report"] => s(&["report", &results, "--out", "report"]),
        ["compare"] => s(&["compare", "--baseline", &results, "--current", &results]),
        ["export"] => s(&["export", "bencher", &results]),
        ["ab"] => s(&["ab", "--rejudge", &ab_json]),
        ["clean"] => s(&["clean", "--dry-run"]),
        ["completions"] => s(&["completions", "bash"]),
        // The planned command follows plan's own flags.
        ["plan"] => {
            return (
                s(&[
                    "plan", "--dir", "newplan", "run", "stellar", "--preset", "smoke",
                ]),
                3,
            );
        }
        _ => path.to_vec(),
    };
    let at = args.len();
    (args, at)
}

/// A real trace for `run replay`, `seed.kvtrace` in `dir`.
pub fn seed_trace(dir: &Path) {
    let o = ledgerbench(
        &[
            "record",
            "ycsb",
            "--param",
            "records=10",
            "--param",
            "operations=10",
            "--out",
            "seed.kvtrace",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
}
