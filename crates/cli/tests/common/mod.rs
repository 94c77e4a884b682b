//! Helpers every CLI test file shares.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `ledgerbench` binary in `cwd`.
pub fn ledgerbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run ledgerbench")
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
