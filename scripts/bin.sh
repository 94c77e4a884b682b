# Sourced by the scripts: the release binary cargo built, wherever cargo puts
# builds ($CARGO_TARGET_DIR, build.target-dir of a cargo config, or target/),
# as an absolute path; a clear error when it is not built.
ledgerbench_bin() {
  local dir
  dir=$(cargo metadata --format-version 1 --no-deps --offline 2>/dev/null |
    grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
  local bin="${dir:-$PWD/target}/release/ledgerbench"
  if [[ ! -x "$bin" ]]; then
    echo "$(basename "$0"): $bin is not built; run cargo build --release --workspace --locked" >&2
    return 1
  fi
  echo "$bin"
}
