//! What a lookup costs the device: reads per GET per store, measured over
//! the verification lookups after ingestion, when nothing else writes.

use serde::{Deserialize, Serialize};

/// Reads per lookup over the verification phase: random transactions from
/// the whole history, each looked up both ways (`txdata`; `txindex` then
/// `ledgers`), one at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupReads {
    /// Transactions looked up.
    pub txs: u64,
    /// Per store, in the workload's store order.
    pub stores: Vec<StoreReads>,
}

/// One store's reads during the verification lookups. Each figure is
/// absent where it cannot be measured (no private device, an engine
/// without the counter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreReads {
    /// Store name.
    pub store: String,
    /// GETs made on the store.
    pub gets: u64,
    /// Read requests its device completed meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reads: Option<u64>,
    /// Bytes its device read meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Block cache misses the engine counted meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_cache_misses: Option<u64>,
    /// Bytes the engine's own background compaction read meanwhile. Above
    /// 0, the device reads include them and overstate what a GET costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction_read_bytes: Option<u64>,
}

impl StoreReads {
    /// Device read requests per GET.
    pub fn device_reads_per_get(&self) -> Option<f64> {
        per(self.device_reads?, self.gets)
    }

    /// Device KiB read per GET.
    pub fn device_kib_per_get(&self) -> Option<f64> {
        per(self.device_read_bytes?, self.gets).map(|b| b / 1024.0)
    }

    /// Whether background compaction read during the lookups (so the
    /// device figures are not the lookups' alone); absent when unknown.
    pub fn compaction_ran(&self) -> Option<bool> {
        self.compaction_read_bytes.map(|b| b > 0)
    }
}

fn per(n: u64, gets: u64) -> Option<f64> {
    (gets > 0).then(|| n as f64 / gets as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_get_figures_are_absent_without_gets_or_a_meter() {
        let s = StoreReads {
            store: "txdata".into(),
            gets: 200,
            device_reads: Some(300),
            device_read_bytes: Some(200 * 8192),
            block_cache_misses: None,
            compaction_read_bytes: Some(0),
        };
        assert_eq!(s.device_reads_per_get(), Some(1.5));
        assert_eq!(s.device_kib_per_get(), Some(8.0));
        assert_eq!(s.compaction_ran(), Some(false));
        let none = StoreReads {
            gets: 0,
            ..s.clone()
        };
        assert_eq!(none.device_reads_per_get(), None);
        let unmetered = StoreReads {
            device_reads: None,
            compaction_read_bytes: None,
            ..s
        };
        assert_eq!(unmetered.device_reads_per_get(), None);
        assert_eq!(unmetered.compaction_ran(), None);
    }
}
