//! From flags, run file and preset to the runs to make: which backends on
//! which stores, with what workload, devices and memory limit.

use std::collections::BTreeMap;
use std::fs::{self};

use super::*;
use ledgerbench_core::Tuning;

/// The TOML run file.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RunFile {
    pub(super) preset: Option<String>,
    pub(super) backends: Option<Vec<String>>,
    pub(super) stores: Option<BTreeMap<String, String>>,
    pub(super) engine_memory: Option<String>,
    pub(super) workload: Option<toml::Table>,
    #[serde(default)]
    pub(super) backend: BTreeMap<String, toml::Table>,
}

pub(super) struct Plan {
    pub(super) preset: String,
    /// Private device size per store, when stores get private devices.
    pub(super) device_size: Option<u64>,
    /// `--read-ahead-kb`: the private devices' read-ahead (`None`: the kernel's).
    pub(super) read_ahead_kb: Option<u32>,
    pub(super) workload: StellarConfig,
    /// The durability level of every store.
    pub(super) durability: Durability,
    /// Each run to make (a sweep runs each design at several limits).
    pub(super) runs: Vec<PlannedRun>,
    /// What a sample of the run's ledgers says of its end.
    pub(super) sampled: ledgerbench_driver::stellar::budget::Sampled,
    /// `--ratio`: txdata at the last batch over the memory limit.
    pub(super) ratio: Option<f64>,
}

/// The data/memory ratios of the report's machines, by `--ratio` name:
/// txdata's ~150 GB at a month over the c5.4xlarge's 32 GB and the
/// i4i.4xlarge's 128 GB.
pub(super) const RATIOS: &[(&str, f64)] = &[("c5", 4.8), ("i4i", 1.2)];

/// Stores at the end of a run take this many times their key and value
/// bytes at most, on disk: space amplification and compaction's copies
/// (a full compaction rewrites a store beside itself).
const DISK_PER_BYTE: f64 = 2.5;

impl Plan {
    /// Key and value bytes of each store after the last batch.
    pub(super) fn final_bytes(&self) -> [f64; 3] {
        let ledgers = (self.workload.ledgers + self.workload.streaming.ledgers) as f64;
        self.sampled.store_bytes_per_ledger.map(|b| b * ledgers)
    }

    /// The disk one run's stores need at most.
    pub(super) fn disk_needed(&self) -> u64 {
        (self.final_bytes().iter().sum::<f64>() * DISK_PER_BYTE) as u64 + ((3 * 64) << 20)
    }
}

/// What a run expects, said before it starts: its data, the disk it
/// needs beside what `out` has free, and the least time it can take.
pub(super) fn expected(plan: &Plan, out: &std::path::Path) -> String {
    let gib = |b: f64| b / f64::from(1u32 << 30);
    let [l, t, i] = plan.final_bytes();
    let free = ledgerbench_core::fsutil::free_bytes(out).unwrap_or(0);
    let w = &plan.workload;
    let floor = w.ledgers as f64 * plan.sampled.secs_per_ledger / w.workers() as f64;
    let ratio = match (plan.ratio, plan.runs.first().and_then(|r| r.memory_limit)) {
        (Some(r), Some(m)) => format!(", {r}x the {} MiB memory limit (--ratio)", m >> 20),
        _ => String::new(),
    };
    format!(
        "expects {:.1} GiB of data at the end (ledgers {:.1}, txdata {:.1}{ratio}, txindex {:.1}), up to {:.1} GiB of disk a run ({:.1} GiB free); each run takes at least {:.0} min, the generator's pace here, {} run(s)",
        gib(l + t + i),
        gib(l),
        gib(t),
        gib(i),
        gib(plan.disk_needed() as f64),
        gib(free as f64),
        (floor / 60.0).max(0.1),
        plan.runs.len()
    )
}

/// One run to make.
pub(super) struct PlannedRun {
    /// Label of its results: the design, with `@LIMIT` in a sweep.
    pub(super) label: String,
    /// What it measures without the limit: the backend, or a hybrid's
    /// `store=backend` list. Runs of one design form one group in the
    /// verdict, which reads it from the results instead of the label.
    pub(super) design: String,
    /// The backend of each store.
    pub(super) specs: [BackendSpec; 3],
    /// The run's memory limit, bytes.
    pub(super) memory_limit: Option<u64>,
}

/// Parses a run file's text; `path` names it in errors.
pub(super) fn parse_run_file(text: &str, path: &std::path::Path) -> anyhow::Result<RunFile> {
    toml::from_str(text).with_context(|| format!("run file {}", path.display()))
}

/// The preset's workload with the run file's `[workload]` table over it.
pub(super) fn file_workload(
    mut workload: StellarConfig,
    file: &RunFile,
    path: &std::path::Path,
) -> anyhow::Result<StellarConfig> {
    if let Some(t) = &file.workload {
        let mut base = toml::Table::try_from(&workload)?;
        registry::merge_toml(&mut base, t);
        workload = base
            .try_into()
            .with_context(|| format!("run file {}: [workload]", path.display()))?;
    }
    Ok(workload)
}

pub(super) fn plan(args: &Args) -> anyhow::Result<Plan> {
    let file: RunFile = match &args.config {
        Some(p) => {
            let text = fs::read_to_string(p)
                .with_context(|| format!("reading run file {}", p.display()))?;
            parse_run_file(&text, p)?
        }
        None => RunFile::default(),
    };
    let preset_name = args
        .preset
        .clone()
        .or(file.preset.clone())
        .unwrap_or_else(|| "quick".into());
    let preset = presets::get(&preset_name).with_context(|| {
        format!(
            "unknown preset `{preset_name}`; accepted: {}",
            presets::NAMES.join(", ")
        )
    })?;
    let workload = workload_of(args, &preset, &file)?;
    let memory = match (&args.engine_memory, &file.engine_memory, &args.config) {
        (Some(s), _, _) => Some(size::parse_named("--engine-memory", s)?),
        (None, Some(s), Some(p)) => Some(size::parse_named(
            &format!("run file {}: engine_memory", p.display()),
            s,
        )?),
        _ => preset.engine_memory,
    };
    let specs = Specs {
        level: args.level.durability,
        memory,
        no_background_compaction: workload.compaction == CompactionStrategy::None,
        file: &file.backend,
        sets: args
            .set
            .sets
            .iter()
            .map(|l| registry::parse_set(l))
            .collect::<anyhow::Result<Vec<_>>>()?,
    };
    for name in file.backend.keys() {
        BackendSpec::by_name(name).with_context(|| "run file [backend.NAME] table".to_string())?;
    }
    let runs = backend_runs(args, &file, &specs)?;
    for (backend, _) in &specs.sets {
        if !runs
            .iter()
            .any(|(_, specs)| specs.iter().any(|s| &s.name == backend))
        {
            bail!("--set {backend}.…: backend `{backend}` is not in this run");
        }
    }
    let sampled = ledgerbench_driver::stellar::budget::sample(&workload)?;
    let device_size = harness::device_size(
        args.place.device,
        args.place.device_size.as_deref(),
        estimate_device_size(&workload, &sampled),
    )?;
    if device_size.is_some() && args.keep_stores {
        bail!(
            "--keep-stores keeps store directories, but private devices are removed after each run; add --device none"
        );
    }
    let (ratio, preset_limit) = ratio_limit(args, &preset, (&workload, &sampled))?;
    let memory_limit = memory_limit(args, &preset_name, preset_limit)?;
    Ok(Plan {
        preset: preset_name,
        device_size,
        read_ahead_kb: args.place.read_ahead_kb,
        workload,
        durability: args.level.durability,
        runs: swept(args, runs, memory_limit)?,
        sampled,
        ratio,
    })
}

/// The preset's workload, the run file's `[workload]` over it, then flags;
/// validated and sized before anything is created, so a commit too large
/// for the harness budget is refused up front (results record the size used).
fn workload_of(
    args: &Args,
    preset: &presets::Preset,
    file: &RunFile,
) -> anyhow::Result<StellarConfig> {
    let file_path = args.config.as_deref().unwrap_or(std::path::Path::new("?"));
    let mut workload = file_workload(preset.workload.clone(), file, file_path)?;
    args.shape.apply(&mut workload)?;
    let st = &mut workload.streaming;
    if let Some(v) = args.streaming_ledgers {
        st.ledgers = v;
    }
    if let Some(v) = args.close_interval_ms {
        st.close_interval_ms = v;
    }
    if let Some(v) = args.lookup_workers {
        st.lookup_workers = v;
    }
    if let Some(v) = args.lookup_rate {
        st.lookup_rate = Some(v);
    }
    if let Some(a) = &args.arrival {
        st.arrival = match a.as_str() {
            "poisson" => ledgerbench_driver::stellar::Arrival::Poisson,
            _ => ledgerbench_driver::stellar::Arrival::Fixed,
        };
    }
    if !args.lookup_rates.is_empty() {
        st.lookup_rates = args.lookup_rates.clone();
    }
    if let Some(ms) = args.p99_bound_ms {
        st.p99_bound_us = ms * 1000.0;
    }
    workload.validate()?;
    Ok(ledgerbench_driver::stellar::budget::resolved(&workload)?)
}

/// How a backend name becomes the spec of a store in this run.
struct Specs<'a> {
    level: Durability,
    memory: Option<u64>,
    no_background_compaction: bool,
    /// The run file's `[backend.NAME]` tables.
    file: &'a BTreeMap<String, toml::Table>,
    /// `--set` lines, parsed: backend and its one setting.
    sets: Vec<(String, toml::Table)>,
}

impl Specs<'_> {
    /// The named backend at the run's level and memory, with the run file's
    /// settings and then the flags' over them, checked to still give the level.
    fn make(&self, name: &str) -> anyhow::Result<BackendSpec> {
        let mut s = BackendSpec::by_name(name)?;
        s.set_durability(self.level)
            .with_context(|| format!("backend `{name}` at --durability {}", self.level))?;
        if let Some(m) = self.memory {
            harness::scale_memory(&mut s, m);
        }
        if self.no_background_compaction {
            s.tune(Tuning::NoBackgroundCompaction);
        }
        if let Some(t) = self.file.get(name) {
            s.apply_overrides(t)?;
        }
        for (backend, t) in self.sets.iter().filter(|(b, _)| b == name) {
            s.apply_overrides(t).with_context(|| {
                format!(
                    "--set {backend}.{}",
                    t.keys().cloned().collect::<Vec<_>>().join(",")
                )
            })?;
        }
        s.check_durability(self.level)?;
        Ok(s)
    }
}

/// The runs' labels and the three stores' specs: one hybrid run
/// (`--store`, or the run file's `stores`), else one run per backend.
fn backend_runs(
    args: &Args,
    file: &RunFile,
    specs: &Specs<'_>,
) -> anyhow::Result<Vec<(String, [BackendSpec; 3])>> {
    let hybrid: Vec<(String, String)> = if !args.stores.is_empty() {
        args.stores
            .iter()
            .map(|s| {
                s.split_once('=')
                    .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                    .with_context(|| {
                        format!(
                            "--store `{s}`: write STORE=BACKEND, e.g. txdata={}",
                            registry::DEFAULT_BACKENDS[0]
                        )
                    })
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        file.stores
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect()
    };
    if !hybrid.is_empty() {
        if args.backends.is_some() || args.backend.is_some() {
            bail!("--store builds one hybrid run; do not combine it with --backends or --backend");
        }
        return Ok(vec![hybrid_run(&hybrid, specs)?]);
    }
    let list = match (&args.backends, &args.backend, &file.backends) {
        (Some(l), _, _) => l.clone(),
        (None, Some(b), _) => b.clone(),
        (None, None, Some(v)) => v.join(","),
        (None, None, None) => std::env::var(registry::BACKENDS_ENV)
            .unwrap_or_else(|_| registry::DEFAULT_LIST.to_string()),
    };
    let mut runs = Vec::new();
    for s in registry::parse_list(&list, specs.level)? {
        let one = specs.make(&s.name)?;
        runs.push((s.name, [one.clone(), one.clone(), one]));
    }
    Ok(runs)
}

/// One run with a backend per store, every store named once.
fn hybrid_run(
    hybrid: &[(String, String)],
    specs: &Specs<'_>,
) -> anyhow::Result<(String, [BackendSpec; 3])> {
    let mut chosen: [Option<BackendSpec>; 3] = [None, None, None];
    for (store, backend) in hybrid {
        let i = STORES
            .iter()
            .position(|s| s == store)
            .with_context(|| format!("unknown store `{store}`; accepted: {}", STORES.join(", ")))?;
        if chosen[i].is_some() {
            bail!("store `{store}` is given twice");
        }
        chosen[i] = Some(specs.make(backend)?);
    }
    let missing: Vec<&str> = (0..3)
        .filter(|&i| chosen[i].is_none())
        .map(|i| STORES[i])
        .collect();
    if !missing.is_empty() {
        bail!(
            "a hybrid run needs a backend for every store; missing: {}",
            missing.join(", ")
        );
    }
    let [a, b, c] = chosen.map(|s| s.expect("checked above"));
    let label = format!("ledgers={},txdata={},txindex={}", a.name, b.name, c.name);
    Ok((label, [a, b, c]))
}

/// The run's memory limit: the flag's (`none` included), else the preset's
/// where cgroups work; elsewhere the run goes on unlimited, says so, and
/// records no limit.
fn memory_limit(
    args: &Args,
    preset_name: &str,
    preset_limit: Option<u64>,
) -> anyhow::Result<Option<u64>> {
    if args.limit.memory_limit.is_some() {
        return args.limit.bytes();
    }
    Ok(preset_limit.and_then(|b| match MemoryLimit::available() {
        Ok(()) => Some(b),
        Err(e) => {
            ledgerbench_core::note!(
                "ledgerbench: preset {preset_name} runs without its {} MiB memory limit: {e}",
                b >> 20
            );
            None
        }
    }))
}

/// Each run at the run's limit, or (`--sweep-limits`) at every swept limit,
/// largest first: each backend's runs go from the smallest data/memory
/// ratio to the largest.
fn swept(
    args: &Args,
    runs: Vec<(String, [BackendSpec; 3])>,
    memory_limit: Option<u64>,
) -> anyhow::Result<Vec<PlannedRun>> {
    if args.shape.sweep_limits.is_empty() {
        return Ok(runs
            .into_iter()
            .map(|(l, specs)| PlannedRun {
                label: l.clone(),
                design: l,
                specs,
                memory_limit,
            })
            .collect());
    }
    let mut limits = Vec::new();
    for s in &args.shape.sweep_limits {
        limits.push((
            s.trim().to_string(),
            harness::memory_limit_of("--sweep-limits", s)?,
        ));
    }
    limits.sort_by_key(|l| std::cmp::Reverse(l.1));
    let mut swept = Vec::new();
    for (l, s) in &runs {
        for (name, bytes) in &limits {
            swept.push(PlannedRun {
                label: format!("{l}@{name}"),
                design: l.clone(),
                specs: s.clone(),
                memory_limit: Some(*bytes),
            });
        }
    }
    Ok(swept)
}

/// `--ratio` (or the preset's) as a number, and the memory limit it sets
/// from txdata's bytes at the end; the preset's limit without one.
fn ratio_limit(
    args: &Args,
    preset: &presets::Preset,
    (w, s): (
        &StellarConfig,
        &ledgerbench_driver::stellar::budget::Sampled,
    ),
) -> anyhow::Result<(Option<f64>, Option<u64>)> {
    let ratio = ratio_of(args.ratio.as_deref().or(preset.ratio))?;
    let txdata = s.store_bytes_per_ledger[1] * w.ledgers as f64;
    Ok(match ratio {
        Some(r) => (Some(r), Some((txdata / r) as u64)),
        None => (None, preset.memory_limit),
    })
}

/// `--ratio` as a number: a machine's name or a number above 0.
fn ratio_of(given: Option<&str>) -> anyhow::Result<Option<f64>> {
    let Some(r) = given else { return Ok(None) };
    let named = RATIOS.iter().find(|(n, _)| *n == r).map(|(_, x)| *x);
    match named.or_else(|| r.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0)) {
        Some(x) => Ok(Some(x)),
        None => bail!("--ratio {r}: give c5 (4.8), i4i (1.2) or a number above 0"),
    }
}

/// A sparse device size that holds the largest store at the end, from the
/// sampled ledgers, with room for space amplification and compaction's
/// temporary copies (a full compaction rewrites the store beside itself).
pub(super) fn estimate_device_size(
    w: &StellarConfig,
    s: &ledgerbench_driver::stellar::budget::Sampled,
) -> u64 {
    let ledgers = (w.ledgers + w.streaming.ledgers) as f64;
    let largest = s
        .store_bytes_per_ledger
        .iter()
        .fold(0f64, |m, b| m.max(b * ledgers));
    (largest * 3.0) as u64 + (512 << 20)
}
