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
    println!("cargo:rerun-if-env-changed=KVBENCH_GO");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("kvbench-sidecar");
    let go = std::env::var("KVBENCH_GO").unwrap_or_else(|_| "go".into());
    let built = Command::new(&go)
        .args(["build", "-trimpath", "-buildvcs=false", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&root)
        .output();
    match built {
        Ok(o) if o.status.success() => {
            println!("cargo:rustc-env=KVBENCH_SIDECAR_BUILT={}", out.display());
        }
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr).replace('\n', " ");
            println!("cargo:warning=the Go sidecar did not build: {why}");
            println!(
                "cargo:rustc-env=KVBENCH_SIDECAR_UNAVAILABLE=`go build` of sidecar/ failed: {why}"
            );
        }
        Err(e) => {
            println!("cargo:warning=no Go toolchain ({go}: {e}); the Go backends are unavailable");
            println!(
                "cargo:rustc-env=KVBENCH_SIDECAR_UNAVAILABLE=no Go toolchain to build the sidecar ({go}: {e}); install Go 1.26 (scripts/setup.sh does) and rebuild"
            );
        }
    }
}
