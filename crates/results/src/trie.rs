//! Results of `ledgerbench run trie`: a Merkle-Patricia state trie of N
//! accounts in each engine, by node hash or by path, blocks of updates and
//! reads, and what each account read and update cost at the device.

use serde::{Deserialize, Serialize};

use crate::{Latency, RunHeader};

/// Settings of a trie run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrieConfig {
    /// Seed of keys, balances and picks.
    pub seed: u64,
    /// Accounts in the trie.
    pub accounts: u64,
    /// Blocks run after the load.
    pub blocks: u64,
    /// Account updates picked per block (repeats in a block update once).
    pub updates_per_block: u64,
    /// Accounts read per block, through the trie and through the flat table.
    pub reads_per_block: u64,
    /// Which accounts a block touches: `uniform`, `hotcold` or `zipf`.
    pub dist: String,
    /// `hotcold`: the hot accounts' share of all accounts.
    pub hot_fraction: f64,
    /// `hotcold`: the share of picks that go to the hot accounts.
    pub hot_share: f64,
    /// `zipf`: the constant (scrambled over the key space).
    pub theta: f64,
    /// Entries per commit while loading.
    pub load_batch: u64,
}

impl Default for TrieConfig {
    fn default() -> Self {
        Self {
            seed: 42,
            accounts: 1_000_000,
            blocks: 200,
            updates_per_block: 2000,
            reads_per_block: 1000,
            dist: "hotcold".into(),
            hot_fraction: 0.1,
            hot_share: 0.9,
            theta: 0.99,
            load_batch: 50_000,
        }
    }
}

impl TrieConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), crate::InvalidConfig> {
        if self.accounts < 2
            || self.blocks == 0
            || self.updates_per_block == 0
            || self.load_batch == 0
        {
            return Err(
                "accounts must be at least 2; blocks, updates per block and load_batch at least 1"
                    .into(),
            );
        }
        if self.accounts > 1 << 34 {
            return Err(format!(
                "--accounts {} is over what a load of one bucket at a time hashes in reasonable time (2^34)",
                self.accounts
            )
            .into());
        }
        if !(self.hot_fraction > 0.0 && self.hot_fraction <= 1.0) {
            return Err(format!(
                "--hot-fraction must be in (0, 1], not {}",
                self.hot_fraction
            )
            .into());
        }
        if !(0.0..=1.0).contains(&self.hot_share) {
            return Err(format!("--hot-share must be in [0, 1], not {}", self.hot_share).into());
        }
        if !(0.0..1.0).contains(&self.theta) {
            return Err(format!("--theta must be in [0, 1), not {}", self.theta).into());
        }
        if !["uniform", "hotcold", "zipf"].contains(&self.dist.as_str()) {
            return Err(format!(
                "unknown --dist `{}`; accepted: uniform, hotcold, zipf",
                self.dist
            )
            .into());
        }
        Ok(())
    }
}

/// Whole results of a trie run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrieResults {
    /// Schema, workload, seed, time, command, machine.
    #[serde(flatten)]
    pub header: RunHeader,
    /// The settings.
    pub config: TrieConfig,
    /// The memory cgroup the blocks ran in (loads run without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// One per backend and scheme.
    pub runs: Vec<TrieRun>,
}

/// One backend under one scheme.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrieRun {
    /// Backend name.
    pub backend: String,
    /// `hash` or `path`.
    pub scheme: String,
    /// The backend's typed config.
    pub config: serde_json::Value,
    /// How device figures were obtained, or why they are absent.
    pub device_meter: String,
    /// The load, when it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<TrieLoad>,
    /// Every block run, in order.
    pub blocks: Vec<TrieBlock>,
    /// Device bytes written after the last block: what was still dirty,
    /// written back when the store closed and the device was synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_device_write_bytes: Option<u64>,
    /// Microseconds one read of the device's counters takes (mean of 1,000
    /// before the blocks): every GET of both read passes pays two, so a
    /// trie read of L levels carries 2L of them in its latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_stat_micros: Option<f64>,
    /// Most bytes the memory cgroup held during the blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup_peak_bytes: Option<u64>,
    /// Most bytes of the harness's own heap during the blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harness_heap_peak_bytes: Option<u64>,
    /// The root from scratch over the final key set (the check of every
    /// incremental update); absent when the run did not get that far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_root: Option<String>,
    /// Why the run stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The bulk load of every account, sorted, into trie and flat table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrieLoad {
    /// Seconds, hashing included.
    pub secs: f64,
    /// Trie nodes stored.
    pub nodes: u64,
    /// Their bytes.
    pub node_bytes: u64,
    /// Bytes of the flat table (keys and values).
    pub flat_bytes: u64,
    /// Bytes the device took for the load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
    /// The store's files after the load.
    pub disk_allocated_bytes: u64,
    /// The state root.
    pub root: String,
}

/// One block: its updates, then its reads through the trie and the flat
/// table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrieBlock {
    /// Block number, from 1.
    pub block: u64,
    /// Distinct accounts updated.
    pub updates: u64,
    /// Trie nodes fetched by the updates.
    pub nodes_read: u64,
    /// Their bytes.
    pub node_bytes_read: u64,
    /// Trie nodes written (new hashes, or paths overwritten).
    pub nodes_written: u64,
    /// Their bytes.
    pub node_bytes_written: u64,
    /// Keys and values put in the block's commit: nodes and flat entries.
    pub logical_write_bytes: u64,
    /// Seconds fetching and decoding nodes.
    pub walk_secs: f64,
    /// Seconds encoding and hashing new nodes.
    pub hash_secs: f64,
    /// Seconds of the block's commit (one atomic batch).
    pub commit_secs: f64,
    /// Device read requests during the update and commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_device_reads: Option<u64>,
    /// Bytes the device took during the block (write-back and compaction
    /// land when the kernel and engine choose: sum over blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
    /// Bytes compactions wrote during the block (engines that count them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_write_bytes: Option<u64>,
    /// Microseconds writers stalled during the block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_micros: Option<u64>,
    /// The store's files after the block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_allocated_bytes: Option<u64>,
    /// Account reads by walking the trie.
    pub trie: ReadPass,
    /// The same accounts read from the flat table.
    pub flat: ReadPass,
    /// The state root after the block.
    pub root: String,
}

/// A pass of account reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadPass {
    /// Accounts read.
    pub reads: u64,
    /// Store GETs per account read (nodes fetched, or 1 for the flat table).
    pub gets_per_read: f64,
    /// Nibbles above the leaf, mean (trie reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_depth: Option<f64>,
    /// Device read requests per account read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads_per_read: Option<f64>,
    /// Device bytes read per account read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_bytes_per_read: Option<f64>,
    /// Major page faults per account read (the reads of mmap engines).
    pub major_faults_per_read: f64,
    /// Per level (0 = root), GETs and the device reads during them.
    pub levels: Vec<LevelCost>,
    /// Latency of one account read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// Values that differed from the regenerated account (must be 0).
    pub mismatches: u64,
}

/// One level of the walk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LevelCost {
    /// Level, 0 = root.
    pub level: u32,
    /// GETs at this level.
    pub gets: u64,
    /// Device read requests during them; absent without a private device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads: Option<u64>,
    /// GETs at this level that read nothing from the device: served from
    /// the engine's cache or the page cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_gets: Option<u64>,
}
