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
    /// trace; docs/src/fit.md shows one written by hand.
    #[arg(long, value_name = "FILE")]
    workload: PathBuf,
    /// Keys (the initial state and the key space) times the model's: 10x,
    /// 0.5x or a bare number.
    #[arg(long, default_value = "1x", value_name = "FACTOR")]
    scale: String,
    /// Operations times the model's; default: the same as --scale.
    #[arg(long, value_name = "FACTOR")]
    length: Option<String>,
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
    let path = std::fs::canonicalize(&args.workload).with_context(|| {
        format!(
            "--workload {}: no such model file (`ledgerbench fit TRACE --out FILE` writes one)",
            args.workload.display()
        )
    })?;
    let Some(path) = path.to_str() else {
        bail!(
            "--workload {}: the path is not UTF-8; move the file to a plain path",
            path.display()
        );
    };
    let mut params = vec![
        format!("workload={path:?}"),
        format!("scale={:?}", factor("--scale", &args.scale)?),
    ];
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
    generated("synth", args.run, None)
}

/// `10x`, `0.5x` or `10` as a factor above 0.
fn factor(flag: &str, s: &str) -> anyhow::Result<f64> {
    let n = s.strip_suffix(['x', 'X']).unwrap_or(s);
    match n.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => bail!("{flag} {s}: give a factor above 0, like 10x, 0.5x or 3"),
    }
}

#[cfg(test)]
mod tests {
    use super::factor;

    #[test]
    fn factors_are_read_with_or_without_their_x() {
        assert_eq!(factor("--scale", "10x").ok(), Some(10.0));
        assert_eq!(factor("--scale", "0.5").ok(), Some(0.5));
        for bad in ["0x", "-1", "x", "ten"] {
            let e = factor("--scale", bad).expect_err(bad).to_string();
            assert!(e.contains("give a factor above 0"), "{e}");
        }
    }
}
