//! The generated operation streams by name: YCSB core workloads A to F, a
//! Solana blockstore, a blob store with TTL and an account-state store. Each
//! runs through the same replay driver and meters as a recorded trace.

use crate::{accounts, blobs, solana, synth, ycsb};

/// Why a generated workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// No workload has that name.
    #[error("unknown workload `{0}`; accepted: ycsb, solana, blobs, accounts, synth")]
    Unknown(String),
    /// A setting is missing, unknown or out of range.
    #[error("workload `{workload}`: {message}")]
    Config {
        /// The workload.
        workload: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
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
pub const NAMES: &[&str] = &["ycsb", "solana", "blobs", "accounts", "synth"];

/// A generator by name, configured from a JSON object of settings (unknown
/// settings are refused, naming the setting).
pub fn by_name(
    name: &str,
    seed: u64,
    params: serde_json::Value,
) -> Result<Box<dyn OpSource + Send>, GenError> {
    fn boxed<G: Refill + Send + 'static>(g: G) -> Box<dyn OpSource + Send> {
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
        "synth" => boxed(synth::Synth::new(
            seed,
            serde_json::from_value(params).map_err(|e| GenError::config("synth", e))?,
        )?),
        other => return Err(GenError::Unknown(other.to_string())),
    })
}

/// Bytes a workload keeps alive at once (blobs: every blob within its time
/// to live), which a store that expires its oldest data by size (FIFO) must
/// hold or it would drop live data early; `None` for the workloads with no
/// time to live, or settings [`by_name`] refuses.
pub fn live_bytes(name: &str, params: &serde_json::Value) -> Option<u64> {
    match name {
        "blobs" => serde_json::from_value::<blobs::BlobConfig>(params.clone())
            .ok()
            .map(|c| c.live_bytes()),
        _ => None,
    }
}

/// The mark that ends a workload's load phase, which an open-loop rate
/// (`--op-rate`) does not pace: YCSB loads its records before `load`,
/// accounts creates its accounts before `genesis`. `None` when every
/// operation of the stream is the workload's own (Solana, blobs): the rate
/// paces it from the first.
pub fn load_mark(name: &str) -> Option<&'static str> {
    match name {
        "ycsb" => Some("load"),
        "accounts" => Some("genesis"),
        "synth" => Some("load"),
        _ => None,
    }
}

/// How a workload's stream is split between client threads, as results
/// record it: `partitioned` when the generator makes each thread's share
/// itself (its own seeded stream), else the generic key-hash split of one
/// stream ([`ledgerbench_trace::split`]).
pub fn split_of(name: &str) -> &'static str {
    match name {
        "ycsb" | "accounts" => "partitioned",
        _ => ledgerbench_trace::split::SPLIT,
    }
}

/// `threads` streams of a workload, one per client thread running at once
/// on the same stores; one stream, the workload's own, for `threads == 1`.
pub fn threads(
    name: &str,
    seed: u64,
    params: serde_json::Value,
    threads: u64,
) -> Result<Vec<Box<dyn OpSource + Send>>, GenError> {
    fn boxed<G: Refill + Send + 'static>(g: G) -> Box<dyn OpSource + Send> {
        Box::new(Queued::new(g))
    }
    let roles = timed(name, &params);
    (0..threads)
        .map(|t| {
            Ok(match name {
                // A model's roles: each thread its role's part.
                "synth" if roles => boxed(synth::Synth::thread(
                    seed,
                    serde_json::from_value(params.clone())
                        .map_err(|e| GenError::config("synth", e))?,
                    t,
                    threads,
                )?),
                "ycsb" => boxed(ycsb::Ycsb::thread(
                    seed,
                    serde_json::from_value(params.clone())
                        .map_err(|e| GenError::config("ycsb", e))?,
                    t,
                    threads,
                )?),
                "accounts" => boxed(accounts::Accounts::partition(
                    seed,
                    serde_json::from_value(params.clone())
                        .map_err(|e| GenError::config("accounts", e))?,
                    t,
                    threads,
                )?),
                _ => {
                    let mut params = params.clone();
                    // A slot's shreds are committed by several threads:
                    // only after a mark has every one of them landed.
                    if name == "solana"
                        && threads > 1
                        && let Some(p) = params.as_object_mut()
                    {
                        p.insert("checks_after_mark".into(), true.into());
                    }
                    let one = by_name(name, seed, params)?;
                    boxed(ledgerbench_trace::split::Split::new(one, t, threads))
                }
            })
        })
        .collect()
}

/// Whether a workload's streams carry their own times: a `synth` model
/// with roles, paced by its period, one stream per role's thread. The run
/// follows those times and takes no `--op-rate`.
pub fn timed(name: &str, params: &serde_json::Value) -> bool {
    name == "synth"
        && serde_json::from_value::<synth::SynthConfig>(params.clone())
            .ok()
            .and_then(|c| synth::role_threads(&c).ok().flatten())
            .is_some()
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
