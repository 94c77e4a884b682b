//! Builds the Go sidecar (`sidecar/` at the workspace root) with the Go
//! toolchain when there is one. Without Go, or when the build fails, the
//! crate still builds and its backends report why they are unavailable.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"))
        .join("../../sidecar");
    for f in [
        "main.go",
        "pebble.go",
        "leveldb.go",
        "badger.go",
        "bolt.go",
        "null.go",
        "go.mod",
        "go.sum",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    println!("cargo:rerun-if-env-changed=LEDGERBENCH_GO");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("ledgerbench-sidecar");
    // $LEDGERBENCH_GO, the system's go, then the toolchain scripts/setup.sh
    // fetches when the system's is too old: the first that builds wins.
    let mut candidates: Vec<String> = std::env::var("LEDGERBENCH_GO").into_iter().collect();
    candidates.push("go".into());
    let cache = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cache")));
    if let Ok(c) = cache {
        candidates.push(c.join("ledgerbench/go/bin/go").display().to_string());
    }
    let mut built = Err(std::io::Error::other("no Go toolchain tried"));
    let mut go = String::new();
    for g in candidates {
        go = g;
        built = Command::new(&go)
            .args(["build", "-trimpath", "-buildvcs=false", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&root)
            .output();
        if matches!(&built, Ok(o) if o.status.success()) {
            break;
        }
    }
    let ok = matches!(&built, Ok(o) if o.status.success());
    // Tests that need the sidecar are listed as ignored without it, except
    // where skips must fail (CI sets LEDGERBENCH_REQUIRE_PRIVILEGED).
    println!("cargo:rustc-check-cfg=cfg(ledgerbench_no_sidecar)");
    println!("cargo:rerun-if-env-changed=LEDGERBENCH_REQUIRE_PRIVILEGED");
    let required =
        std::env::var("LEDGERBENCH_REQUIRE_PRIVILEGED").is_ok_and(|v| !v.is_empty() && v != "0");
    if !ok {
        rerun_when_go_appears();
        if !required {
            println!("cargo:rustc-cfg=ledgerbench_no_sidecar");
        }
    }
    match built {
        Ok(o) if o.status.success() => {
            println!(
                "cargo:rustc-env=LEDGERBENCH_SIDECAR_BUILT={}",
                out.display()
            );
        }
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr).replace('\n', " ");
            println!("cargo:warning=the Go sidecar did not build: {why}");
            println!(
                "cargo:rustc-env=LEDGERBENCH_SIDECAR_UNAVAILABLE=`go build` of sidecar/ failed: {why}"
            );
        }
        Err(e) => {
            println!("cargo:warning=no Go toolchain ({go}: {e}); the Go backends are unavailable");
            println!(
                "cargo:rustc-env=LEDGERBENCH_SIDECAR_UNAVAILABLE=no Go toolchain to build the sidecar ({go}: {e}); install Go 1.26 (scripts/setup.sh does) and rebuild"
            );
        }
    }
}

/// Without a Go that builds the sidecar, builds again once one may have
/// appeared: when `PATH` changes or a file lands in one of its directories
/// (cargo compares the directories' contents), so installing Go after a
/// first build is enough, with no `cargo clean`.
fn rerun_when_go_appears() {
    println!("cargo:rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path).filter(|d| d.is_dir()) {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
}
