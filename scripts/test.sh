#!/usr/bin/env bash
# The whole test suite: format check, clippy with warnings denied, the
# house rules (scripts/rules.py), every test.
# Everything builds in the release profile, the same one benchmarks use, so
# RocksDB's C++ (about 14 minutes on 2 cores) compiles once, not once per
# profile; --workspace everywhere keeps the feature set, and so the build, identical.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
python3 scripts/rules.py
cargo clippy --release --workspace --all-targets --locked -- -D warnings
# The Go engines' own tests (crates/gokv/go: the full-disk guard), with the
# Go the build uses: LEDGERBENCH_GO, the system's, or scripts/setup.sh's.
# Without one the Go engines are not built either, and the build says so.
for go in ${LEDGERBENCH_GO:-} go "${XDG_CACHE_HOME:-$HOME/.cache}/ledgerbench/go/bin/go"; do
  command -v "$go" >/dev/null 2>&1 || continue
  unformatted=$(cd crates/gokv/go && "${go}fmt" -l .)
  [ -z "$unformatted" ] || { echo "test: gofmt would change: $unformatted (run gofmt -w in crates/gokv/go)" >&2; exit 1; }
  (cd crates/gokv/go && CGO_ENABLED=1 "$go" vet ./... && CGO_ENABLED=1 "$go" test -count=1 ./...)
  break
done
# Tests that need root (loop devices, memory cgroups, tmpfs mounts) are
# marked ignored, so a plain `cargo test` lists them with the reason; as
# root they run too. Set LEDGERBENCH_REQUIRE_PRIVILEGED=1 (CI does) to make
# any test that still cannot run fail instead of skipping.
if [ "$(id -u)" -ne 0 ] && [ -n "${LEDGERBENCH_REQUIRE_PRIVILEGED:-}" ] && [ "${LEDGERBENCH_REQUIRE_PRIVILEGED}" != 0 ]; then
  echo "test: LEDGERBENCH_REQUIRE_PRIVILEGED is set but this is not root: the privileged tests cannot run; run as root, or unset it to list them as ignored" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  cargo test --release --workspace --locked -- --include-ignored
else
  echo "test: not root; the privileged tests are listed as ignored" >&2
  cargo test --release --workspace --locked
fi
