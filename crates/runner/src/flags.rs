//! Flags every run command shares, declared once and flattened into each
//! command's options so they read, parse and fail the same everywhere.

use std::path::PathBuf;

use ledgerbench_driver::rundir::RunDir;

use crate::harness;

/// Where a run writes its results: `--out`, `--force`, `--allow-debug`.
#[derive(clap::Args, Clone, Debug)]
pub struct OutputArgs {
    /// Output directory (must not exist, or be empty); default
    /// $LEDGERBENCH_RUNS_DIR/WORKLOAD-TIMESTAMP (ledgerbench-runs/ when unset).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// --out holds files already: write this run into a new subdirectory
    /// of it (WORKLOAD-TIMESTAMP), beside them; nothing there is replaced.
    #[arg(long)]
    pub force: bool,
    /// Run even from a debug build (its numbers mislead; for testing the harness only).
    #[arg(long)]
    pub allow_debug: bool,
    /// Print results.json to stdout instead of the markdown summary (both
    /// are saved in the output directory either way).
    #[arg(long)]
    pub json: bool,
    /// End a run that makes no progress (no phase, batch, segment or
    /// progress step) for this long, record "no progress for N s" as its
    /// error and go on with the next backend: 90s, 15m, 2h, `off`; `auto`
    /// is 10x the longest gap between progress reports so far, at least 10
    /// min.
    #[arg(long, value_name = "TIME", default_value = "auto")]
    pub stall_timeout: crate::watchdog::StallTimeout,
}

impl OutputArgs {
    /// Prints and saves the summary (or prints results.json with
    /// `--json`); exit 2 when a run failed.
    pub fn finish(
        &self,
        out: &std::path::Path,
        summary: &str,
        failed: bool,
    ) -> anyhow::Result<std::process::ExitCode> {
        crate::output::finish(out, summary, failed, self.json)
    }

    /// Refuses a debug build unless `--allow-debug`.
    pub fn check_build(&self) -> anyhow::Result<()> {
        crate::output::check_build(cfg!(debug_assertions), self.allow_debug)
    }

    /// Claims the run directory: the one a supervisor claimed for this
    /// worker, else `--out` (a new subdirectory of it with `--force` when
    /// it holds files), else a fresh one named after `workload`. Called
    /// after every check of the flags, so a refused command leaves nothing
    /// behind.
    pub fn create(&self, workload: &str) -> anyhow::Result<(PathBuf, RunDir)> {
        let rundir = match RunDir::adopt() {
            Some(adopted) => adopted?,
            None => RunDir::claim(self.out.as_deref(), workload, self.force)?,
        };
        Ok((rundir.path().to_path_buf(), rundir))
    }
}

/// `--memory-limit SIZE`: the memory cgroup a run's stores live in.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct MemoryLimitArg {
    /// Memory cgroup limit of the run (engine heap and page cache together,
    /// entered after emptying the page cache of the files the run reads: a
    /// replay's trace, a reused spool; no other process's), e.g. 256MiB;
    /// needs root and cgroups (v1 or v2). `none`: no limit.
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<String>,
}

impl MemoryLimitArg {
    /// The limit in bytes, after checking cgroups are usable here; `None`
    /// when not given or `none`.
    pub fn bytes(&self) -> anyhow::Result<Option<u64>> {
        match self.memory_limit.as_deref() {
            None | Some("none") => Ok(None),
            Some(s) => harness::memory_limit(s).map(Some),
        }
    }
}

/// `--set BACKEND.KEY=VALUE`: engine settings over the defaults.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SetArgs {
    /// Engine setting, BACKEND.KEY=VALUE (TOML value); repeatable, e.g.
    /// --set rocksdb-leveled.use_direct_reads=true. Unknown keys are refused.
    #[arg(long = "set", value_name = "BACKEND.KEY=VALUE")]
    pub sets: Vec<String>,
}

/// `--device` and `--device-size`: where a run's stores live.
#[derive(clap::Args, Clone, Debug)]
pub struct DeviceArgs {
    /// Private device per store: auto (a loop device when root and
    /// available), loop (or an error saying why not), none (the run
    /// directory's filesystem; device figures absent).
    #[arg(long, value_enum, default_value_t = harness::DeviceMode::Auto)]
    pub device: harness::DeviceMode,
    /// Size of each private device (sparse); default from the workload's size.
    #[arg(long, value_name = "SIZE")]
    pub device_size: Option<String>,
    /// Read-ahead of each private device, KiB; default: as the kernel sets
    /// it for a new device (what a node's disk has unless tuned). Read-ahead
    /// 0 makes the kernel read a block that straddles two pages with two
    /// requests, doubling buffered IO per GET.
    #[arg(long, value_name = "KIB")]
    pub read_ahead_kb: Option<u32>,
}

impl DeviceArgs {
    /// Bytes of each private device, or `None` for the run directory.
    pub fn size(&self, default: u64) -> anyhow::Result<Option<u64>> {
        harness::device_size(self.device, self.device_size.as_deref(), default)
    }
}

/// Parses `--threads 1,4,8`: counts from 1 to [`MAX_THREADS`], each once.
pub fn parse_threads(list: &str) -> anyhow::Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    for part in list.split(',') {
        let n: u64 = part.trim().parse().map_err(|_| {
            anyhow::anyhow!(
                "--threads `{list}`: `{part}` is not a number of threads; give e.g. 1,4,8"
            )
        })?;
        if !(1..=MAX_THREADS).contains(&n) {
            anyhow::bail!(
                "--threads `{list}`: {n} is out of range; give 1 to {MAX_THREADS} threads"
            );
        }
        if out.contains(&n) {
            anyhow::bail!("--threads `{list}`: {n} is given twice");
        }
        out.push(n);
    }
    Ok(out)
}

/// Client threads a run takes at most: past this the harness's threads,
/// not the engine, decide what is measured on any machine ledgerbench targets.
pub const MAX_THREADS: u64 = 256;

/// The `--stall-timeout` in a recorded command line (`auto` when absent).
pub fn stall_timeout_of(args: &[String]) -> anyhow::Result<crate::watchdog::StallTimeout> {
    let given = args.iter().enumerate().find_map(|(i, a)| match a.as_str() {
        "--stall-timeout" => args.get(i + 1).map(String::as_str),
        a => a.strip_prefix("--stall-timeout="),
    });
    Ok(given.unwrap_or("auto").parse()?)
}
