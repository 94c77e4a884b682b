#!/usr/bin/env bash
# Installs what building ledgerbench needs on a fresh Debian/Ubuntu machine:
# libclang (bindgen, for librocksdb-sys and mdbx-sys) and a C++ compiler.
# Safe to run again: it only installs what is missing.
set -euo pipefail

# bindgen needs the shared library and clang's builtin headers (stddef.h).
have_libclang() {
  ls /usr/lib/llvm-*/lib/libclang*.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 &&
    ls /usr/lib/llvm-*/lib/clang/*/include/stddef.h >/dev/null 2>&1
}

missing=()
have_libclang || missing+=(libclang-dev)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
# The Go toolchain below is fetched with these.
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
# The gate and the `ab` trial scripts read ab.json with it.
command -v jq >/dev/null 2>&1 || missing+=(jq)

# The point-read sweep measures the device's own IOPS at each queue depth
# with fio, the anchor its engines are put beside (skipped with a note
# where fio is missing).
command -v fio >/dev/null 2>&1 || missing+=(fio)

# CI opens the HTML report in a real browser (scripts/check-report.sh);
# elsewhere that check is optional and skipped without Chromium.
if [ "${CI:-}" = true ] && ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi
# CI runs a sweep on a one-node Slurm cluster (scripts/slurm-up.sh, which
# also installs these when missing).
if [ "${CI:-}" = true ] && ! command -v slurmctld >/dev/null 2>&1; then
  missing+=(slurm-wlm munge)
fi
# Published charts are checked by eye as PNGs (rsvg-convert).
if [ "${CI:-}" = true ] && ! command -v rsvg-convert >/dev/null 2>&1; then
  missing+=(librsvg2-bin)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "setup: need root (or sudo) to install ${missing[*]}; install them and run again" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust 1.95 (rustup) and run again" >&2
  exit 1
fi

# The Go engines (Pebble, goleveldb, Badger, bbolt) are a Go package cargo
# builds with Go 1.26 or newer (crates/gokv/go/go.mod) and links in. Distributions ship
# older Go, so when the system has none new enough, the toolchain is fetched
# from the Go module proxy (what GOTOOLCHAIN=auto would fetch) into
# ~/.cache/ledgerbench/go, where the build looks for it. Without Go the Go
# backends say they are unavailable and everything else still works.
GO_WANT=1.26.8
go_ok() { "$1" version 2>/dev/null | grep -qE 'go1\.(2[6-9]|[3-9][0-9])'; }
if ! go_ok go; then
  dest="${XDG_CACHE_HOME:-$HOME/.cache}/ledgerbench/go"
  if ! go_ok "$dest/bin/go"; then
    echo "setup: fetching the Go $GO_WANT toolchain from proxy.golang.org into $dest" >&2
    tmp=$(mktemp -d)
    mod="golang.org/toolchain@v0.0.1-go$GO_WANT.linux-$(dpkg --print-architecture 2>/dev/null || echo amd64)"
    if curl -fsSL -o "$tmp/go.zip" "https://proxy.golang.org/${mod%@*}/@v/${mod#*@}.zip" &&
      (cd "$tmp" && unzip -q go.zip); then
      rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && mv "$tmp/$mod" "$dest"
      chmod +x "$dest"/bin/* "$dest"/pkg/tool/*/* 2>/dev/null || true
    else
      echo "setup: could not fetch Go; the Go backends will be unavailable" >&2
    fi
    rm -rf "$tmp"
  fi
fi

# CI builds the guide (docs/) with mdBook (scripts/docs.sh); elsewhere it is
# optional: the guide reads as markdown in docs/src.
if [ "${CI:-}" = true ] && ! command -v mdbook >/dev/null 2>&1; then
  echo "setup: installing mdbook 0.5.4" >&2
  cargo install --locked mdbook --version 0.5.4 --no-default-features --features search
fi

# The scheduler examples (examples/) are checked by the tools their users
# run: actionlint for the GitHub Actions workflow (a Go module, built with
# the Go above) and kubernetes-validate for the Kubernetes manifests (PyPI;
# it carries the API schemas, so it needs no cluster).
if ! command -v actionlint >/dev/null 2>&1; then
  gobin=$(command -v go || echo "${XDG_CACHE_HOME:-$HOME/.cache}/ledgerbench/go/bin/go")
  if go_ok "$gobin"; then
    echo "setup: installing actionlint" >&2
    GOBIN="${CARGO_HOME:-$HOME/.cargo}/bin" "$gobin" install github.com/rhysd/actionlint/cmd/actionlint@v1.7.7 ||
      echo "setup: could not install actionlint; the workflow example is not linted" >&2
  fi
fi
if ! command -v kubernetes-validate >/dev/null 2>&1; then
  echo "setup: installing kubernetes-validate" >&2
  python3 -m pip install --quiet --user kubernetes-validate 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages kubernetes-validate ||
    echo "setup: could not install kubernetes-validate; the Kubernetes example is not validated" >&2
fi
