#!/usr/bin/env bash
# The whole test suite: format check, clippy with warnings denied, every test.
# Everything builds in the release profile, the same one benchmarks use, so
# RocksDB's C++ (about 14 minutes on 2 cores) compiles once, not once per
# profile; --workspace everywhere keeps the feature set, and so the build, identical.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets --locked -- -D warnings
cargo test --release --workspace --locked
