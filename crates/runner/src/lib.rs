//! Run orchestration of ledgerbench, callable from Rust: resolving backends
//! through the registry, placing stores (private loop devices or the data
//! directory), memory-limited runs under a supervisor, the Stellar,
//! point-read, fan-out, replay and generated workloads, presets and sweeps,
//! and the crash test's supervisor and worker.
//!
//! Each workload's arguments are plain structs with public fields; they also
//! derive clap's `Args`, so the binary's options, defaults and help come
//! from the same definition (reth keeps its node arguments in library crates
//! the same way). Supervised runs, crash cycles and fan-out probes start the
//! current executable again with a hidden subcommand (`crash-worker`,
//! `fan-out-probe`) or the same arguments: a program that calls them must
//! dispatch those as `ledgerbench` does (see `crates/cli/src/main.rs`).

// The registry under its old module name: every backend a run names goes
// through it.
use ledgerbench_engines as registry;

pub mod ab;
pub mod capacity_cmd;
pub mod crash;
pub mod evict;
pub mod fanout_cmd;
pub mod fit_cmd;
pub mod flags;
pub mod guard;
pub mod harness;
pub mod import_cmd;
pub mod import_rocks;
pub mod micro_cmd;
pub mod observe;
pub mod output;
pub mod plan_cmd;
pub mod planted;
pub mod pointreads_cmd;
pub mod presets;
pub mod replay_cmd;
pub mod size;
pub mod soak_cmd;
pub mod state_cache;
pub mod stellar_cmd;
pub mod storecopy;
mod stream;
pub mod supervise;
pub mod synth_cmd;
pub mod trie_cmd;
pub mod watchdog;
