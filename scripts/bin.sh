# Sourced by the scripts.

# Where cargo puts builds ($CARGO_TARGET_DIR, build.target-dir of a cargo
# config, or target/), as an absolute path.
target_dir() {
  local dir
  dir=$(cargo metadata --format-version 1 --no-deps --offline 2>/dev/null |
    grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
  echo "${dir:-$PWD/target}"
}

# The release binary cargo built, as an absolute path; a clear error when
# it is not built.
ledgerbench_bin() {
  local bin
  bin="$(target_dir)/release/ledgerbench"
  if [[ ! -x "$bin" ]]; then
    echo "$(basename "$0"): $bin is not built; run cargo build --release --workspace --locked" >&2
    return 1
  fi
  echo "$bin"
}

# A new scratch directory for `ledgerbench ab`'s runs: on tmpfs (/dev/shm)
# when it has 2 GiB free, so the timings gated are the code's and not this
# machine's disk (on a VM's virtual disk, fsync jitter alone moves a small
# run's batch time by more than the 5% the gate must catch); else under $1.
ab_scratch() {
  local avail
  avail=$(df --output=avail -B1 /dev/shm 2>/dev/null | tail -n 1 || echo 0)
  if [[ -w /dev/shm && ${avail:-0} -gt $((2 << 30)) ]]; then
    local d
    d=$(mktemp -d /dev/shm/ledgerbench-ab.XXXXXX)
    # Names this script's process: `ledgerbench clean` removes the
    # directory once it is gone (a killed gate leaves it in RAM).
    echo "ledgerbench pid=$$" > "$d/.scratch.ledgerbench-owner"
    echo "$d"
  else
    mktemp -d "$1/ab.XXXXXX"
  fi
}

# Whether the name $1 is among the rest, or the rest is empty (a script's
# NAME... arguments: none means all).
wanted() {
  [ $# -eq 1 ] && return 0
  local n
  for n in "${@:2}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# One named run of a publication script: `fresh_run TAG NAME DIR CMD...`
# runs CMD with `--out DIR`, unless DIR holds a finished run (its
# summary.md). A run that did not finish cannot go on from where it
# stopped, so its directory is moved aside (DIR.unfinished-TIME: nothing is
# deleted) and it starts again. A run that fails is said, and the script
# goes on with the next.
fresh_run() {
  local tag=$1 name=$2 dir=$3
  shift 3
  if [ -f "$dir/summary.md" ]; then
    echo "$tag: $name is done ($dir)"
    return 0
  fi
  if [ -e "$dir" ]; then
    local aside
    aside="$dir.unfinished-$(date -u +%Y%m%dT%H%M%S)"
    echo "$tag: $name did not finish; moved to $aside"
    mv "$dir" "$aside"
  fi
  echo "$tag: $name $(date -u +%H:%M:%S)"
  "$@" --out "$dir" || echo "$tag: $name exited $?"
}
