//! Builds the Go engines (`go/` in this crate) with the Go toolchain when
//! there is one, twice: as a shared library ledgerbench loads into its own
//! process the first time a Go store opens (the default path,
//! `Bridge::InProcess`; loaded then, not linked, so a run of other engines
//! carries no Go runtime), and as the `ledgerbench-sidecar` program (the
//! socket path kept for measuring it). Without Go, or when the build fails,
//! the crate still builds and the Go backends report why they are
//! unavailable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("go");
    for f in std::fs::read_dir(&root).expect("the Go sources").flatten() {
        println!("cargo:rerun-if-changed={}", f.path().display());
    }
    println!("cargo:rerun-if-env-changed=LEDGERBENCH_GO");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    let library = out_dir.join("libledgerbenchgo.so");
    let sidecar = out_dir.join("ledgerbench-sidecar");
    // netgo, osusergo: no cgo DNS or user lookups (the engines' modules
    // import net for their metrics exporters), so the library needs no
    // other library beyond libc and pthreads.
    let library_args = [
        "build",
        "-buildmode=c-shared",
        "-tags",
        "netgo,osusergo",
        "-trimpath",
        "-buildvcs=false",
        "-o",
    ];
    let sidecar_args = ["build", "-trimpath", "-buildvcs=false", "-o"];
    let (go, built) = first_go_that_builds(&root, &library_args, &library);
    let built = built.and_then(|o| {
        if o.status.success() {
            go_build(&go, &root, &sidecar_args, &sidecar)
        } else {
            Ok(o)
        }
    });
    let ok = matches!(&built, Ok(o) if o.status.success());
    // Tests that need the Go engines are listed as ignored without them,
    // except where skips must fail (CI sets LEDGERBENCH_REQUIRE_PRIVILEGED).
    println!("cargo:rustc-check-cfg=cfg(ledgerbench_no_go)");
    println!("cargo:rerun-if-env-changed=LEDGERBENCH_REQUIRE_PRIVILEGED");
    let required =
        std::env::var("LEDGERBENCH_REQUIRE_PRIVILEGED").is_ok_and(|v| !v.is_empty() && v != "0");
    if ok {
        println!(
            "cargo:rustc-env=LEDGERBENCH_GO_LIB_BUILT={}",
            library.display()
        );
        println!(
            "cargo:rustc-env=LEDGERBENCH_SIDECAR_BUILT={}",
            sidecar.display()
        );
        return;
    }
    rerun_when_go_appears();
    let why = match built {
        Ok(o) => format!(
            "`go build` of crates/gokv/go failed: {}",
            String::from_utf8_lossy(&o.stderr).replace('\n', " ")
        ),
        Err(e) => format!(
            "no Go toolchain to build the Go engines ({go}: {e}); install Go 1.26 (scripts/setup.sh does) and rebuild"
        ),
    };
    // Where skips must fail, a build without the Go engines fails too.
    assert!(
        !required,
        "LEDGERBENCH_REQUIRE_PRIVILEGED is set and the Go engines are unavailable: {why}"
    );
    println!("cargo:rustc-cfg=ledgerbench_no_go");
    println!("cargo:warning=the Go engines are unavailable: {why}");
    println!("cargo:rustc-env=LEDGERBENCH_GO_UNAVAILABLE={why}");
}

/// `$LEDGERBENCH_GO`, the system's go, then the toolchain scripts/setup.sh
/// fetches when the system's is too old: the first that builds wins.
fn first_go_that_builds(
    root: &Path,
    args: &[&str],
    out: &Path,
) -> (String, std::io::Result<Output>) {
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
        built = go_build(&go, root, args, out);
        if matches!(&built, Ok(o) if o.status.success()) {
            break;
        }
    }
    (go, built)
}

fn go_build(go: &str, root: &Path, args: &[&str], out: &Path) -> std::io::Result<Output> {
    Command::new(go)
        .args(args)
        .arg(out)
        .arg(".")
        .current_dir(root)
        .env("CGO_ENABLED", "1")
        .output()
}

/// Without a Go that builds, builds again once one may have appeared:
/// when `PATH` changes or a file lands in one of its directories (cargo
/// compares the directories' contents), so installing Go after a first
/// build is enough, with no `cargo clean`.
fn rerun_when_go_appears() {
    println!("cargo:rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path).filter(|d| d.is_dir()) {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
}
