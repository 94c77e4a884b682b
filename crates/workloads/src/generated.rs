//! The generated operation streams by name: YCSB core workloads A to F, a
//! Solana blockstore, a blob store with TTL and an account-state store. Each
//! runs through the same replay driver and meters as a recorded trace.

use crate::{accounts, blobs, solana, ycsb};

/// Why a generated workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// No workload has that name.
    #[error("unknown workload `{0}`; accepted: ycsb, solana, blobs, accounts")]
    Unknown(String),
    /// A setting is missing, unknown or out of range.
    #[error("workload `{workload}`: {message}")]
    Config {
        /// The workload.
        workload: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// Concurrent workers asked of a workload that runs with one.
    #[error("workload `{0}` runs with one worker; concurrent workers: accounts")]
    OneWorker(String),
}

impl GenError {
    /// A setting of `workload` is wrong: `message` says how.
    pub fn config(workload: &'static str, message: impl std::fmt::Display) -> Self {
        GenError::Config {
            workload,
            message: message.to_string(),
        }
    }
}

use ledgerbench_trace::queue::{Queued, Refill};
use ledgerbench_trace::{Header, OpSource};

/// The workloads, by name.
pub const NAMES: &[&str] = &["ycsb", "solana", "blobs", "accounts"];

/// A generator by name, configured from a JSON object of settings (unknown
/// settings are refused, naming the setting).
pub fn by_name(
    name: &str,
    seed: u64,
    params: serde_json::Value,
) -> Result<Box<dyn OpSource>, GenError> {
    fn boxed<G: Refill + 'static>(g: G) -> Box<dyn OpSource> {
        Box::new(Queued::new(g))
    }
    Ok(match name {
        "ycsb" => boxed(ycsb::Ycsb::new(
            seed,
            serde_json::from_value(params).map_err(|e| GenError::config("ycsb", e))?,
        )?),
        "solana" => boxed(solana::Solana::new(
            seed,
            serde_json::from_value(params).map_err(|e| GenError::config("solana", e))?,
        )?),
        "blobs" => boxed(blobs::Blobs::new(
            seed,
            serde_json::from_value(params).map_err(|e| GenError::config("blobs", e))?,
        )?),
        "accounts" => boxed(accounts::Accounts::new(
            seed,
            serde_json::from_value(params).map_err(|e| GenError::config("accounts", e))?,
        )?),
        other => return Err(GenError::Unknown(other.to_string())),
    })
}

/// `workers` streams of a workload that runs with concurrent workers
/// (accounts), each its own share; one stream for `workers == 1`.
pub fn workers(
    name: &str,
    seed: u64,
    params: serde_json::Value,
    workers: u64,
) -> Result<Vec<Box<dyn OpSource + Send>>, GenError> {
    if name != "accounts" {
        return Err(GenError::OneWorker(name.to_string()));
    }
    let cfg: accounts::AccountConfig =
        serde_json::from_value(params).map_err(|e| GenError::config("accounts", e))?;
    (0..workers)
        .map(|w| {
            accounts::Accounts::partition(seed, cfg.clone(), w, workers)
                .map(|g| Box::new(Queued::new(g)) as Box<dyn OpSource + Send>)
        })
        .collect()
}

/// A header for a generated stream.
pub(crate) fn header(
    workload: &str,
    seed: u64,
    stores: &[&str],
    config: &impl serde::Serialize,
) -> Header {
    Header {
        workload: workload.into(),
        seed,
        stores: stores.iter().map(|s| s.to_string()).collect(),
        source: serde_json::to_value(config).unwrap_or_default(),
    }
}
