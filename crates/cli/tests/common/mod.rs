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
