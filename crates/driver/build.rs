//! Records the compiler and the git commit a binary was built from, so every
//! result names them.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = run(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=LEDGERBENCH_RUSTC={version}");
    let commit =
        run("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run("git", &["status", "--porcelain", "--untracked-files=no"]).is_some();
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=LEDGERBENCH_GIT={commit}{suffix}");
    println!(
        "cargo:rustc-env=LEDGERBENCH_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    // Rerun when a source changes too, not only when git's HEAD or index
    // does: an edit touches neither, and a binary built from edited sources
    // then recorded the last commit as clean (stop 54's parity runs did).
    // Cargo scans a directory given here for any newer file.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let root = std::path::Path::new(&manifest).join("../..");
    for p in ["crates", "benches", "Cargo.toml", "Cargo.lock"] {
        let p = root.join(p);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    // Rebuild when HEAD moves; the index changes on every commit and staging.
    // Git names its directory: in a worktree `.git` is a file pointing to it.
    if let Some(dir) = run("git", &["rev-parse", "--absolute-git-dir"]) {
        for f in ["HEAD", "index"] {
            let p = std::path::Path::new(&dir).join(f);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
