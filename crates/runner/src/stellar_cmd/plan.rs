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
    /// Each run: label and the backend of each store.
    /// Label, the three stores' specs, and the memory limit of each run
    /// (a sweep runs each backend at several).
    pub(super) runs: Vec<(String, [BackendSpec; 3], Option<u64>)>,
}

pub(super) fn merge_table(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_table(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
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
        merge_table(&mut base, t);
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

    let file_path = args.config.as_deref().unwrap_or(std::path::Path::new("?"));
    let mut workload = file_workload(preset.workload, &file, file_path)?;
    args.shape.apply(&mut workload)?;
    if let Some(v) = args.streaming_ledgers {
        workload.streaming.ledgers = v;
    }
    if let Some(v) = args.close_interval_ms {
        workload.streaming.close_interval_ms = v;
    }
    if let Some(v) = args.lookup_workers {
        workload.streaming.lookup_workers = v;
    }
    if let Some(v) = args.lookup_rate {
        workload.streaming.lookup_rate = Some(v);
    }
    if let Some(a) = &args.arrival {
        workload.streaming.arrival = match a.as_str() {
            "poisson" => ledgerbench_driver::stellar::Arrival::Poisson,
            _ => ledgerbench_driver::stellar::Arrival::Fixed,
        };
    }
    if !args.lookup_rates.is_empty() {
        workload.streaming.lookup_rates = args.lookup_rates.clone();
    }
    if let Some(ms) = args.p99_bound_ms {
        workload.streaming.p99_bound_us = ms * 1000.0;
    }
    workload.validate()?;
    // Sized before anything is created, so a commit too large for the
    // harness budget is refused up front; results record the size used.
    let workload = ledgerbench_driver::stellar::budget::resolved(&workload)?;

    let memory = match (&args.engine_memory, &file.engine_memory, &args.config) {
        (Some(s), _, _) => Some(size::parse_named("--engine-memory", s)?),
        (None, Some(s), Some(p)) => Some(size::parse_named(
            &format!("run file {}: engine_memory", p.display()),
            s,
        )?),
        _ => preset.engine_memory,
    };
    let sets = args
        .set
        .sets
        .iter()
        .map(|l| registry::parse_set(l))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let spec = |name: &str| -> anyhow::Result<BackendSpec> {
        let mut s = BackendSpec::by_name(name)?;
        s.set_durability(args.level.durability).with_context(|| {
            format!("backend `{name}` at --durability {}", args.level.durability)
        })?;
        if let Some(m) = memory {
            s.scale_memory(m);
        }
        if workload.compaction == CompactionStrategy::None {
            s.tune(Tuning::NoBackgroundCompaction);
        }
        if let Some(t) = file.backend.get(name) {
            s.apply_overrides(t)?;
        }
        // Flags over the run file.
        for (backend, t) in &sets {
            if backend == name {
                s.apply_overrides(t).with_context(|| {
                    format!(
                        "--set {backend}.{}",
                        t.keys().cloned().collect::<Vec<_>>().join(",")
                    )
                })?;
            }
        }
        s.check_durability(args.level.durability)?;
        Ok(s)
    };
    for name in file.backend.keys() {
        BackendSpec::by_name(name).with_context(|| "run file [backend.NAME] table".to_string())?;
    }

    let mut runs = Vec::new();
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
        let mut chosen: [Option<BackendSpec>; 3] = [None, None, None];
        for (store, backend) in &hybrid {
            let i = STORES.iter().position(|s| s == store).with_context(|| {
                format!("unknown store `{store}`; accepted: {}", STORES.join(", "))
            })?;
            if chosen[i].is_some() {
                bail!("store `{store}` is given twice");
            }
            chosen[i] = Some(spec(backend)?);
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
        runs.push((label, [a, b, c]));
    } else {
        let list = match (&args.backends, &args.backend, &file.backends) {
            (Some(l), _, _) => l.clone(),
            (None, Some(b), _) => b.clone(),
            (None, None, Some(v)) => v.join(","),
            (None, None, None) => std::env::var(registry::BACKENDS_ENV)
                .unwrap_or_else(|_| registry::DEFAULT_LIST.to_string()),
        };
        for s in registry::parse_list(&list, args.level.durability)? {
            let name = s.name.clone();
            let one = spec(&name)?;
            runs.push((name, [one.clone(), one.clone(), one]));
        }
    }
    for (backend, _) in &sets {
        if !runs
            .iter()
            .any(|(_, specs)| specs.iter().any(|s| &s.name == backend))
        {
            bail!("--set {backend}.…: backend `{backend}` is not in this run");
        }
    }
    let device_size = harness::device_size(
        args.place.device,
        args.place.device_size.as_deref(),
        estimate_device_size(&workload),
    )?;
    if device_size.is_some() && args.keep_stores {
        bail!(
            "--keep-stores keeps store directories, but private devices are removed after each run; add --device none"
        );
    }
    let memory_limit = match args.limit.memory_limit {
        // Given (`none` included): parsed as every run command does.
        Some(_) => args.limit.bytes()?,
        // A preset's limit applies where cgroups work; elsewhere the run
        // goes on unlimited, says so, and records no limit.
        None => match preset.memory_limit {
            Some(b) => match MemoryLimit::available() {
                Ok(()) => Some(b),
                Err(e) => {
                    eprintln!(
                        "ledgerbench: preset {preset_name} runs without its {} MiB memory limit: {e}",
                        b >> 20
                    );
                    None
                }
            },
            None => None,
        },
    };
    let runs = if args.shape.sweep_limits.is_empty() {
        runs.into_iter()
            .map(|(l, s)| (l, s, memory_limit))
            .collect()
    } else {
        // Largest limit first: each backend's runs go from the smallest
        // data/memory ratio to the largest.
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
                swept.push((format!("{l}@{name}"), s.clone(), Some(*bytes)));
            }
        }
        swept
    };
    Ok(Plan {
        preset: preset_name,
        device_size,
        read_ahead_kb: args.place.read_ahead_kb,
        workload,
        durability: args.level.durability,
        runs,
    })
}

/// A sparse device size that holds the largest store with room for space
/// amplification and compaction's temporary copies.
pub(super) fn estimate_device_size(w: &StellarConfig) -> u64 {
    let ledgers = w.ledgers + w.streaming.ledgers;
    let txs = ledgers as f64 * w.profile.tx_per_ledger_mean;
    let largest = (ledgers as f64 * 170e3).max(txs * 1.3e3);
    (largest * 5.0) as u64 + (512 << 20)
}
