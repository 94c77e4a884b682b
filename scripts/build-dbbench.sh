#!/usr/bin/env bash
# Builds RocksDB's own db_bench from the source tree the librocksdb-sys
# crate vendors, the very RocksDB that ledgerbench's rocksdb backends link
# (11.8.1 for librocksdb-sys 0.19.0+11.8.1), so a comparison with db_bench
# measures the binding and the harness, not two RocksDB versions.
#
#   scripts/build-dbbench.sh        prints the path of the built db_bench
#
# The build is long (RocksDB's whole library, about as long as the crate's
# own build): it is done once and cached outside the clone, in
# ${XDG_CACHE_HOME:-~/.cache}/ledgerbench/db_bench-VERSION/db_bench; a
# second call prints the cached path at once. Needs g++, make and
# libgflags-dev (installed here when missing and run as root). Compression
# libraries are left out on purpose: the comparisons run without
# compression, as the backends do by default.
set -euo pipefail
cd "$(dirname "$0")/.."
crate=$(grep -A1 '^name = "librocksdb-sys"' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
[[ -n "$crate" ]] || { echo "build-dbbench: librocksdb-sys is not in Cargo.lock" >&2; exit 2; }
version=${crate#*+}
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$crate"/rocksdb 2> /dev/null | head -1 || true)
if [[ -z "$src" ]]; then
    cargo fetch --locked --quiet
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$crate"/rocksdb | head -1)
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ledgerbench/db_bench-$version"
if [[ -x "$cache/db_bench" ]]; then
    echo "$cache/db_bench"
    exit 0
fi
if ! [[ -e /usr/include/gflags/gflags.h ]]; then
    [[ $EUID -eq 0 ]] || { echo "build-dbbench: needs libgflags-dev; install it (or run as root) and run again" >&2; exit 2; }
    echo "build-dbbench: installing libgflags-dev" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgflags-dev > /dev/null
fi
# The crate's sources are read-only to us: build in a copy, then keep only
# the binary. A copy left by an interrupted build is built on, not redone.
work="$cache.build"
if ! [[ -f "$work/Makefile" ]]; then
    mkdir -p "$work"
    cp -a "$src/." "$work/"
fi
echo "build-dbbench: building db_bench $version in $work (long: RocksDB's whole library)" >&2
# DEBUG_LEVEL=0: the release build (-O2, NDEBUG); PORTABLE=1 as the crate
# builds by default (no -march=native); no compression libraries (without
# Snappy a parameter goes unused, so warnings are not errors).
(cd "$work" && DEBUG_LEVEL=0 PORTABLE=1 DISABLE_WARNING_AS_ERROR=1 ALLOW_BUILD_PARAMETER_CHANGE=1 ROCKSDB_DISABLE_SNAPPY=1 ROCKSDB_DISABLE_LZ4=1 \
    ROCKSDB_DISABLE_ZSTD=1 ROCKSDB_DISABLE_ZLIB=1 ROCKSDB_DISABLE_BZIP=1 \
    ROCKSDB_DISABLE_JEMALLOC=1 ROCKSDB_DISABLE_TCMALLOC=1 ROCKSDB_DISABLE_LIBURING=1 \
    make -j"$(nproc)" db_bench > "$work/build.log" 2>&1) || {
    echo "build-dbbench: the build failed; the last lines of $work/build.log:" >&2
    tail -20 "$work/build.log" >&2
    exit 1
}
mkdir -p "$cache"
cp "$work/db_bench" "$cache/db_bench"
"$cache/db_bench" --version > /dev/null 2>&1 || true
rm -rf "$work"
echo "$cache/db_bench"
