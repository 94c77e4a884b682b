//! Records of operation-stream runs (replays, generated workloads): one per
//! segment, the totals, and drift over a soak.

use ledgerbench_core::quantile::median;
use serde::{Deserialize, Serialize};

use super::{Sample, StoreBatch, StoreSummary, TotalSummary};

/// One segment of a replay: the operations up to a mark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentRecord {
    /// Segment number, from 1.
    pub segment: u32,
    /// The mark's label (`batch 3`, ...), or `end` for the tail after the last mark.
    pub mark: String,
    /// Operations in the segment.
    pub ops: u64,
    /// Gets in the segment.
    pub gets: u64,
    /// Seconds of the segment spent producing the operations (reading the
    /// trace, running the generator, regenerating values), inside
    /// `total_secs`: subtract it for the engines' share. Summed over
    /// threads when workers run in parallel. Absent in results written
    /// before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_secs: Option<f64>,
    /// Wall time of the segment, seconds (excluding the meters' `syncfs`).
    pub total_secs: f64,
    /// Process `write_bytes` during the segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_write_bytes: Option<u64>,
    /// Whose memory the segment used; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::MemoryRecord>,
    /// Per store, in header order.
    pub stores: Vec<StoreBatch>,
}

/// Totals of a replay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpsSummary {
    /// Segments completed.
    pub segments: u32,
    /// Puts, deletes, gets and commits executed.
    pub puts: u64,
    /// Deletes.
    pub deletes: u64,
    /// Range deletes (each one operation, however many keys it covers).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub range_deletes: u64,
    /// Gets.
    pub gets: u64,
    /// Scans.
    #[serde(default)]
    pub scans: u64,
    /// Gets that found their key (the others found it absent); absent in
    /// older results. Equal on every engine for one stream run by one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gets_found: Option<u64>,
    /// The values returned by the gets the trace does not check (a RocksDB
    /// trace's), as a wrapping sum of their hashes (hex): equal between
    /// engines whose gets returned the same values; checked gets count in
    /// `mismatches` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gets_digest: Option<String>,
    /// Entries the scans visited in all; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scanned: Option<u64>,
    /// Gets whose result differed from the trace's expectation (must be 0).
    pub mismatches: u64,
    /// Commits.
    pub commits: u64,
    /// Wall time, seconds.
    pub wall_secs: f64,
    /// Operations (puts, deletes, range deletes, gets, scans) per second of wall time.
    pub ops_per_sec: f64,
    /// Seconds spent producing the operations (see [`SegmentRecord::source_secs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_secs: Option<f64>,
    /// Per store totals.
    pub stores: std::collections::BTreeMap<String, StoreSummary>,
    /// All stores together.
    pub total: TotalSummary,
    /// Whether time per segment and memory grew from the first quarter of
    /// the run to the last (soaks); absent with fewer than 8 segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Each client thread's own share, when several ran at once; the
    /// latencies above are these threads' histograms merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadSummary>,
}

/// One client thread of a run with several, over every store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// Thread number, from 0.
    pub thread: u32,
    /// Operations (puts, deletes, gets, scans) it issued.
    pub ops: u64,
    /// Gets among them.
    pub gets: u64,
    /// Commits it made.
    pub commits: u64,
    /// Its gets' latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<super::Latency>,
    /// Its commits' latency in the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<super::Latency>,
    /// Its waits for the writer's turn (engines taking one writer at a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_wait: Option<super::Latency>,
}

/// First quarter against last quarter of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drift {
    /// Median segment seconds, first quarter of segments.
    pub segment_secs_first: f64,
    /// Median segment seconds, last quarter.
    pub segment_secs_last: f64,
    /// Last / first.
    pub segment_secs_ratio: f64,
    /// Median RSS of the first quarter of samples, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_first: Option<u64>,
    /// Median RSS of the last quarter of samples, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_last: Option<u64>,
    /// True when either ratio exceeds [`DRIFT_LIMIT`].
    pub drifted: bool,
}

/// Growth from the first quarter to the last that counts as drift.
pub const DRIFT_LIMIT: f64 = 1.25;

/// Compares the first and last quarters of segments (each one's seconds,
/// in order) and samples.
pub fn drift(segment_secs: &[f64], samples: &[Sample]) -> Option<Drift> {
    let n = segment_secs.len();
    if n < 8 {
        return None;
    }
    let q = n / 4;
    let first = median(&segment_secs[..q])?;
    let last = median(&segment_secs[n - q..])?;
    let rss: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.rss_bytes)
        .map(|b| b as f64)
        .collect();
    let (rss_first, rss_last) = if rss.len() >= 8 {
        let k = rss.len() / 4;
        (
            median(&rss[..k]).map(|x| x as u64),
            median(&rss[rss.len() - k..]).map(|x| x as u64),
        )
    } else {
        (None, None)
    };
    let ratio = last / first.max(1e-9);
    let rss_ratio = rss_first
        .zip(rss_last)
        .map(|(a, b)| b as f64 / a.max(1) as f64);
    Some(Drift {
        segment_secs_first: first,
        segment_secs_last: last,
        segment_secs_ratio: ratio,
        rss_first,
        rss_last,
        drifted: ratio > DRIFT_LIMIT || rss_ratio.is_some_and(|r| r > DRIFT_LIMIT),
    })
}

/// What `record` wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordStats {
    /// Operations written.
    pub ops: u64,
    /// Puts among them.
    pub puts: u64,
    /// Key + value bytes of the puts.
    pub logical_bytes: u64,
    /// Recorded times among them (`At`: a RocksDB trace's timestamps), not
    /// operations on a store.
    #[serde(default)]
    pub times: u64,
}

/// For `skip_serializing_if`: a count that is zero is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A run's initial state given from `--state-cache`: loaded once, kept as
/// a copy of the closed stores, copied in and opened cold by each run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GivenState {
    /// The cache entry: a directory of the cache, named by what the state
    /// is of (engine and settings, model, scale, seed, threads, build).
    pub entry: String,
    /// Whether this run made the entry (its load ran just before, with
    /// the same stores, memory limit and device setup) or found it.
    pub made_here: bool,
    /// Seconds the load that made it took: its operations played up to
    /// the `load` mark, on stores just opened.
    pub load_secs: f64,
    /// When the entry was made (RFC 3339, UTC).
    pub made_at: String,
    /// Bytes the stores' files hold on disk, closed.
    pub bytes: u64,
}
