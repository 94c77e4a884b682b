//! Helpers every CLI test file shares.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub mod args;

/// Runs the `ledgerbench` binary in `cwd`.
pub fn ledgerbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run ledgerbench")
}

/// A replayed run's segments (`run`, from the results in `dir`), from the
/// file beside its results that holds them (`segments_file`), in order.
pub fn segments(dir: &Path, run: &serde_json::Value) -> serde_json::Value {
    let file = run["replay"]["segments_file"]
        .as_str()
        .expect("segments_file");
    let text = std::fs::read_to_string(dir.join(file)).expect("segments file");
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .filter(|l| l["label"] == run["label"])
        .collect()
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).expect("valid JSON")
}

/// A command's standard error.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A finished command's standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `ledgerbench run stellar --preset smoke ARGS` in `cwd`.
pub fn smoke_run(args: &[&str], cwd: &Path) -> Output {
    let mut all = vec!["run", "stellar", "--preset", "smoke"];
    all.extend_from_slice(args);
    ledgerbench(&all, cwd)
}

/// Root, loop devices and memory cgroups are here (else the test says "not run").
pub fn usable() -> bool {
    ledgerbench_testkit::can_run(
        ledgerbench_meter::loopdev::LoopFs::available()
            .and_then(|()| ledgerbench_meter::cgroup::MemoryLimit::available()),
    )
}

/// Loop devices and cgroups whose maker was `pid`.
pub fn leftovers_of(pid: u32) -> Vec<String> {
    let mut v: Vec<String> = ledgerbench_meter::clean::find()
        .into_iter()
        .map(|l| l.to_string())
        .filter(|l| l.contains(&format!("pid {pid})")))
        .collect();
    for root in ledgerbench_meter::cgroup::roots() {
        for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(&format!("ledgerbench-{pid}")) {
                v.push(name);
            }
        }
    }
    v
}

/// The first run recorded in `dir/results.json`.
pub fn first_run(dir: &Path) -> serde_json::Value {
    let bytes = std::fs::read(dir.join("results.json")).expect("results");
    let r: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    r["runs"][0].clone()
}

/// No loop device is backed by a file under `dir`, and nothing under it is mounted.
pub fn assert_no_devices_under(dir: &Path) {
    let losetup = std::process::Command::new("losetup")
        .arg("-a")
        .output()
        .expect("losetup");
    let losetup = String::from_utf8_lossy(&losetup.stdout).to_string();
    let dir = dir.to_str().expect("utf8");
    assert!(!losetup.contains(dir), "{losetup}");
    let mounts = std::fs::read_to_string("/proc/mounts").expect("mounts");
    assert!(!mounts.contains(dir), "{mounts}");
}

/// Every cell's runs in one results file, in the plan's order: what the
/// merged report must read the same as the cells themselves.
pub fn concatenated(cells: &[std::path::PathBuf], to: &Path) {
    let mut all = read_json(&cells[0].join("results.json"));
    let runs: Vec<serde_json::Value> = cells
        .iter()
        .flat_map(|c| {
            read_json(&c.join("results.json"))["runs"]
                .as_array()
                .expect("runs")
                .clone()
        })
        .collect();
    all["runs"] = runs.into();
    all.as_object_mut().expect("object").remove("cell");
    std::fs::create_dir_all(to).expect("dir");
    std::fs::write(
        to.join("results.json"),
        serde_json::to_vec(&all).expect("json"),
    )
    .expect("write");
}

/// A sweep of the smoke preset over two backends and two memory limits:
/// four cells, the shape the scheduler tests plan.
pub const SWEEP: &[&str] = &[
    "run",
    "stellar",
    "--preset",
    "smoke",
    "--backends",
    "rocksdb-leveled,mdbx",
    "--sweep-limits",
    "512MiB,256MiB",
    "--device",
    "none",
];

/// The cell directories a sweep's jobs wrote under `dir`, sorted.
pub fn cell_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .expect("cells")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    v
}

/// Every subcommand `ledgerbench --help` reaches below `path`, as paths:
/// clap writes each help page's `Commands:` list from its command tree, so
/// a command added to the tree is found the day it lands.
pub fn subcommands(path: &[String], cwd: &Path) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let text = stdout(&ledgerbench(&args, cwd));
    let mut found = Vec::new();
    let mut listing = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            listing = true;
            continue;
        }
        if listing && !line.starts_with("  ") {
            break;
        }
        // A description wrapped onto the next line is indented further.
        let name = line
            .split_whitespace()
            .next()
            .filter(|_| listing && !line.starts_with("   "));
        if let Some(name) = name.filter(|n| *n != "help") {
            let mut p = path.to_vec();
            p.push(name.to_string());
            found.extend(subcommands(&p, cwd));
            found.push(p);
        }
    }
    found
}

/// `compare` of `cells` against `baseline` on counters and exact figures
/// must pass. `process_write_bytes` counts a page each time it is dirtied,
/// so a page written back between two writes counts twice: it follows the
/// kernel's writeback timing, not the workload alone, hence its wide band,
/// and the same for the write amplification made from it (11% apart
/// between two runs of one cell once).
pub fn counters_match(cwd: &Path, baseline: &str, cells: &[&str]) -> Output {
    let mut cmp = vec![
        "compare",
        "--only",
        "counter,exact",
        "--threshold",
        "*process_write_bytes=100",
        "--threshold",
        "*write_amp_process=100",
        "--baseline",
        baseline,
        "--current",
    ];
    cmp.extend_from_slice(cells);
    let c = ledgerbench(&cmp, cwd);
    assert_eq!(c.status.code(), Some(0), "{}{}", stdout(&c), stderr(&c));
    c
}
