//! Generators of key-value operation streams for kvbench's other workloads:
//! YCSB core workloads A to F, a Solana blockstore, a blob store with TTL and
//! an account-state store. Each is seeded, regenerates keys and values from
//! their position (memory does not grow with the data set), and runs through
//! the same replay driver and meters as a recorded trace.

pub mod accounts;
pub mod blobs;
pub mod solana;
pub mod ycsb;
pub mod zipf;

use kvbench_trace::queue::{Queued, Refill};
use kvbench_trace::{Header, OpSource};

/// The workloads, by name.
pub const NAMES: &[&str] = &["ycsb", "solana", "blobs", "accounts"];

/// A generator by name, configured from a JSON object of settings (unknown
/// settings are refused, naming the setting).
pub fn by_name(
    name: &str,
    seed: u64,
    params: serde_json::Value,
) -> Result<Box<dyn OpSource>, String> {
    fn boxed<G: Refill + 'static>(g: G) -> Box<dyn OpSource> {
        Box::new(Queued::new(g))
    }
    let bad = |e: serde_json::Error| format!("workload `{name}`: {e}");
    Ok(match name {
        "ycsb" => boxed(ycsb::Ycsb::new(
            seed,
            serde_json::from_value(params).map_err(bad)?,
        )?),
        "solana" => boxed(solana::Solana::new(
            seed,
            serde_json::from_value(params).map_err(bad)?,
        )?),
        "blobs" => boxed(blobs::Blobs::new(
            seed,
            serde_json::from_value(params).map_err(bad)?,
        )?),
        "accounts" => boxed(accounts::Accounts::new(
            seed,
            serde_json::from_value(params).map_err(bad)?,
        )?),
        other => {
            return Err(format!(
                "unknown workload `{other}`; accepted: {}",
                NAMES.join(", ")
            ));
        }
    })
}

/// `workers` streams of a workload that runs with concurrent workers
/// (accounts), each its own share; one stream for `workers == 1`.
pub fn workers(
    name: &str,
    seed: u64,
    params: serde_json::Value,
    workers: u64,
) -> Result<Vec<Box<dyn OpSource + Send>>, String> {
    if name != "accounts" {
        return Err(format!(
            "workload `{name}` runs with one worker; concurrent workers: accounts"
        ));
    }
    let cfg: accounts::AccountConfig =
        serde_json::from_value(params).map_err(|e| format!("workload `{name}`: {e}"))?;
    (0..workers)
        .map(|w| {
            accounts::Accounts::partition(seed, cfg.clone(), w, workers)
                .map(|g| Box::new(Queued::new(g)) as Box<dyn OpSource + Send>)
        })
        .collect()
}

/// A header for a generated stream.
fn header(workload: &str, seed: u64, stores: &[&str], config: &impl serde::Serialize) -> Header {
    Header {
        workload: workload.into(),
        seed,
        stores: stores.iter().map(|s| s.to_string()).collect(),
        source: serde_json::to_value(config).unwrap_or_default(),
    }
}
