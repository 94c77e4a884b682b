//! `ledgerbench run synth --workload W.toml --scale 10x`: a workload model
//! played at a scale on each backend (`crates/workloads/src/synth`), as
//! any generated workload, with every meter.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::replay_cmd::{GenArgs, generated};

/// Options of `ledgerbench run synth`.
#[derive(clap::Args)]
pub struct Args {
    /// The workload model (TOML): `ledgerbench fit` writes one from a
    /// trace; docs/src/fit.md shows one written by hand. Or `--preset
    /// NAME`, a model in the binary with its engines and memory limit
    /// (cosmos, mixgraph, stellar, solana: `ledgerbench list`).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "preset",
        conflicts_with = "preset"
    )]
    workload: Option<PathBuf>,
    /// Keys (the initial state and the key space) times the model's: 10x,
    /// 0.5x or a bare number.
    #[arg(long, default_value = "1x", value_name = "FACTOR")]
    scale: String,
    /// Operations times the model's; default: the same as --scale.
    #[arg(long, value_name = "FACTOR")]
    length: Option<String>,
    /// Keep each engine's loaded initial state in this directory and give
    /// a cold copy of it to every later run of the same engine, settings,
    /// model, scale, seed, threads, memory limit and build, instead of
    /// loading it again (the load then has no segment of its own); made if
    /// missing, never emptied by ledgerbench.
    #[arg(long, value_name = "DIR", env = crate::state_cache::STATE_CACHE_ENV)]
    state_cache: Option<PathBuf>,
    #[command(flatten)]
    run: GenArgs,
}

impl Args {
    /// Where the run writes.
    pub fn output(&self) -> &crate::flags::OutputArgs {
        self.run.output()
    }
}

/// Runs `ledgerbench run synth`.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    let path = model_param(&args)?;
    let mut params = vec![format!("scale={:?}", factor("--scale", &args.scale)?)];
    // A preset's own settings name its model.
    if args.workload.is_some() {
        params.insert(0, format!("workload={path:?}"));
    }
    if let Some(l) = &args.length {
        params.push(format!("length={:?}", factor("--length", l)?));
    }
    // A model's roles name their threads: that many unless --threads says.
    let cfg = ledgerbench_workloads::synth::SynthConfig {
        workload: path.to_string(),
        ..Default::default()
    };
    if let Some(n) = ledgerbench_workloads::synth::role_threads(&cfg).map_err(anyhow::Error::msg)?
        && !args.run.default_threads(n)
    {
        bail!(
            "--threads: this model's roles play on {n} client threads; leave --threads out (or give {n})"
        );
    }
    args.run.prepend_params(params);
    generated("synth", args.run, None, args.state_cache.as_deref())
}

/// The model as the generator takes it: the file's whole path (the run
/// records it), or a preset's `preset:NAME`.
fn model_param(args: &Args) -> anyhow::Result<String> {
    use ledgerbench_workloads::synth::presets;
    let Some(given) = &args.workload else {
        let name = args.run.preset().unwrap_or_default();
        if presets::by_name(name).is_none() {
            bail!(
                "--preset {name}: no such model; the presets are {}",
                presets::names()
            );
        }
        return Ok(format!("{}{name}", presets::PREFIX));
    };
    let path = std::fs::canonicalize(given).with_context(|| {
        format!(
            "--workload {}: no such model file (`ledgerbench fit TRACE --out FILE` writes one)",
            given.display()
        )
    })?;
    let Some(path) = path.to_str() else {
        bail!(
            "--workload {}: the path is not UTF-8; move the file to a plain path",
            path.display()
        );
    };
    Ok(path.to_string())
}

/// `10x`, `0.5x` or `10` as a factor above 0 and at most 1,000,000.
fn factor(flag: &str, s: &str) -> anyhow::Result<f64> {
    let n = s.strip_suffix(['x', 'X']).unwrap_or(s);
    match n.trim().parse::<f64>() {
        // The generator's own bound, said here with the value as given.
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => bail!("{flag} {s}: give a factor above 0 and at most 1,000,000, like 10x, 0.5x or 3"),
    }
}

#[cfg(test)]
mod tests {
    use super::factor;

    #[test]
    fn factors_are_read_with_or_without_their_x() {
        assert_eq!(factor("--scale", "10x").ok(), Some(10.0));
        assert_eq!(factor("--scale", "0.5").ok(), Some(0.5));
        for bad in ["0x", "-1", "x", "ten", "18446744073709551616"] {
            let e = factor("--scale", bad).expect_err(bad).to_string();
            assert!(e.contains("give a factor above 0"), "{e}");
        }
    }
}
