//! A workload model: what `ledgerbench fit` finds in a trace and what
//! `ledgerbench run synth` plays, per store. Plain data a person can read
//! and edit ([`crate::toml`] writes it with a comment per field); every
//! field but the store's name has a default, so a hand-written file states
//! only what it knows.

use serde::{Deserialize, Serialize};

/// The version of the format this build reads and writes.
pub const VERSION: u32 = 1;

/// A workload model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// Where the model came from: the trace fitted, or a person.
    #[serde(default)]
    pub source: String,
    /// The stores (column families), in the trace's order.
    #[serde(rename = "store")]
    pub stores: Vec<Store>,
    /// How operations are grouped into commits, and when commits come.
    #[serde(default)]
    pub commits: Commits,
    /// Who issues the operations, each role on client threads of its own
    /// and paced by `commits.period_micros` (a block writer, RPC readers);
    /// none: one stream of every store's mix.
    #[serde(default, rename = "role", skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<Role>,
}

/// A part of the load with its own threads, mix and rate: in every period
/// (`commits.period_micros`), `ops_per_period` operations from its
/// threads, spread evenly over the period, or at its start in one commit
/// (`block`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// Its name (in the results' thread list).
    pub name: String,
    /// Client threads playing it.
    #[serde(default = "one")]
    pub threads: u32,
    /// Operations a period, its threads together.
    pub ops_per_period: u64,
    /// Shares of its operations; keys, sizes and skew are the stores'.
    pub mix: Mix,
    /// The stores it acts on, by their shares of operations; empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<String>,
    /// Its writes of a period at the period's start, in one commit (a
    /// block); else spread over the period like its reads.
    #[serde(default)]
    pub block: bool,
}

fn one() -> u32 {
    1
}

/// One store's operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The store's name.
    pub name: String,
    /// Operations on the store in the trace (or per unit of a hand-written
    /// model's length).
    #[serde(default)]
    pub operations: u64,
    /// Distinct keys the store held or was asked for (estimated from a
    /// sample of keys when the trace has many).
    #[serde(default)]
    pub keys: u64,
    /// Keys read before the trace wrote them: the least the store held
    /// when the trace began (its initial state).
    #[serde(default)]
    pub initial_keys: u64,
    /// Shares of each kind of operation.
    #[serde(default)]
    pub mix: Mix,
    /// Key sizes, bytes.
    #[serde(default)]
    pub key_size: Sizes,
    /// Value sizes of puts, bytes.
    #[serde(default)]
    pub value_size: Sizes,
    /// Entries a scan asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_length: Option<Sizes>,
    /// The order new keys come in.
    #[serde(default)]
    pub inserts: Inserts,
    /// How accesses spread over the keys.
    #[serde(default)]
    pub access: Access,
    /// How long after its last write a key is read, in operations on the
    /// store (temporal locality).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_age: Option<Quantiles>,
    /// How long a key lives from its first write to its delete, in
    /// operations on the store (TTL-like deletes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<Quantiles>,
}

/// Shares of a store's operations (they sum to 1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Mix {
    /// Puts of a key not in the store.
    pub insert: f64,
    /// Puts of a key already there.
    pub overwrite: f64,
    /// Deletes of one key.
    pub delete: f64,
    /// Deletes of a key range.
    pub delete_range: f64,
    /// Gets that find their key.
    pub get_found: f64,
    /// Gets that do not.
    pub get_missing: f64,
    /// Gets of keys the trace never wrote and whose answer it did not
    /// record: the state it started with, or missing; a trace cannot tell.
    pub get_unwritten: f64,
    /// Scans.
    pub scan: f64,
}

impl Mix {
    /// The shares in a fixed order, with their names.
    pub fn shares(&self) -> [(&'static str, f64); 8] {
        [
            ("insert", self.insert),
            ("overwrite", self.overwrite),
            ("delete", self.delete),
            ("delete_range", self.delete_range),
            ("get_found", self.get_found),
            ("get_missing", self.get_missing),
            ("get_unwritten", self.get_unwritten),
            ("scan", self.scan),
        ]
    }
}

/// Empirical quantiles of a quantity (sizes, ages, gaps).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quantiles {
    /// Smallest.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Values these were taken from (a sample of a long trace's).
    pub count: u64,
}

/// A size distribution: fixed, or fitted with the empirical quantiles kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sizes {
    /// Every size is this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<u32>,
    /// The sizes seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantiles: Option<Quantiles>,
    /// A Generalized Pareto fitted to them (db_bench's value model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pareto: Option<Pareto>,
}

/// A Generalized Pareto size distribution (db_bench's `value_theta`,
/// `value_k`, `value_sigma`) and how well it fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pareto {
    /// The smallest size (`value_theta`).
    pub loc: f64,
    /// The tail (`value_k`): 0 exponential, above 0 heavier.
    pub shape: f64,
    /// The spread (`value_sigma`).
    pub scale: f64,
    /// Kolmogorov-Smirnov distance of the sizes from it (0 a perfect fit).
    #[serde(default)]
    pub ks: f64,
    /// Share of sizes at exactly the smallest, drawn as it: a writer that
    /// raises small sizes to a floor (db_bench's mixgraph does, to 10
    /// bytes) leaves them there, and the Pareto then fits the sizes above.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub floor: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The order of inserts: the share above every key before them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Inserts {
    /// Share of inserts above every key put before (1: sequential, about
    /// 0: random).
    pub ascending: f64,
    /// The same within a key prefix of N bytes (sequential within a
    /// prefix, as a block number after a table id): one entry per prefix
    /// length measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub within_prefix: Vec<PrefixOrder>,
}

/// The share of inserts above every earlier key with the same prefix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixOrder {
    /// Prefix bytes.
    pub bytes: u32,
    /// Share of inserts above every earlier key of their prefix.
    pub ascending: f64,
}

/// How accesses spread over the keys. A synthesized run picks a key range
/// by `key_ranges` where given (else the whole key space), then a key in
/// it by `power` where given (else any alike), as db_bench's mixgraph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Access {
    /// Share of accesses to the hottest 0.1% of keys.
    pub hottest_0_1: f64,
    /// Share of accesses to the hottest 1% of keys.
    pub hottest_1: f64,
    /// Share of accesses to the hottest 10% of keys.
    pub hottest_10: f64,
    /// The hottest n keys take `a * n^b` of the accesses (db_bench's
    /// `key_dist_a`, `key_dist_b`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<Power>,
    /// Key ranges' hotness, ranked, as `a e^(b x) + c e^(d x)` (db_bench's
    /// `keyrange_dist_a` to `_d`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_ranges: Option<KeyRanges>,
}

/// The power law of the hottest keys' share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Power {
    /// The hottest key's share.
    pub a: f64,
    /// Growth of the share with the keys taken (1 uniform; Zipf's
    /// exponent is `1 - b`).
    pub b: f64,
    /// Largest gap between the law and the trace's share of the hottest
    /// keys.
    #[serde(default)]
    pub max_gap: f64,
}

/// Key ranges' hotness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRanges {
    /// Ranges of equal key counts, in key order.
    pub ranges: u32,
    /// Steep term's scale.
    pub a: f64,
    /// Steep term's rate.
    pub b: f64,
    /// Shallow term's scale.
    pub c: f64,
    /// Shallow term's rate.
    pub d: f64,
    /// Root mean square gap between the curve and the ranges' shares.
    #[serde(default)]
    pub rmse: f64,
    /// The same gap for ranges all alike: how much better the curve is.
    #[serde(default)]
    pub flat_rmse: f64,
}

/// Commits: their sizes and when they come.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Commits {
    /// Writes (puts and deletes, every store's) per commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes: Option<Quantiles>,
    /// Microseconds between commits, where the trace has times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_micros: Option<Quantiles>,
    /// A commit every this many microseconds (a block time), when the
    /// gaps hold within a tenth of their median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_micros: Option<u64>,
    /// Writes (every store's) between the application's flushes of every
    /// store, where the trace flushes: part of the workload (Stellar's
    /// node flushes after each batch), not the engine's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_every_writes: Option<u64>,
    /// Writes between the application's full manual compactions, where
    /// the trace compacts (the Stellar preset's `--compaction manual`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_every_writes: Option<u64>,
}
