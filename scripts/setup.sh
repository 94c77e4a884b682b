#!/usr/bin/env bash
# Installs what building kvbench needs on a fresh Debian/Ubuntu machine:
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
# The Go engines (Pebble, goleveldb, Badger, bbolt) run in a sidecar that
# cargo builds with Go (sidecar/go.mod names the version); without Go those
# backends report themselves unavailable and everything else still works.
command -v go >/dev/null 2>&1 || missing+=(golang-go)

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
