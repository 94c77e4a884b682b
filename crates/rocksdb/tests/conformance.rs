//! The shared conformance suite, run on every RocksDB config.

use ledgerbench_conformance::{Subject, conformance_suite};
use ledgerbench_core::{Durability, KvBackend};
use ledgerbench_rocksdb::{
    Compaction, Partitioned, PartitionedConfig, Rocks, RocksConfig, Sharded, ShardedConfig,
};

const FIFO_CAP: u64 = 8 << 20;

/// A named config with its memory scaled down so tests stay small; every
/// other setting (blob files, L0 triggers, caching) is the named one's.
fn shrink(base: RocksConfig) -> RocksConfig {
    RocksConfig {
        write_buffer_size: 1 << 20,
        max_write_buffer_number: 2,
        max_background_jobs: 2,
        ..base
    }
}

/// The report's options with `compaction`, scaled down.
fn small(compaction: Compaction) -> RocksConfig {
    let fifo = matches!(compaction, Compaction::Fifo { .. });
    shrink(RocksConfig {
        compaction,
        max_open_files: if fifo { -1 } else { 5000 },
        ..RocksConfig::default()
    })
}

mod leveled {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-leveled",
        open: |d| Rocks::open_boxed(d, &small(Compaction::Leveled)),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod fifo {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-fifo",
        open: |d| {
            Rocks::open_boxed(
                d,
                &small(Compaction::Fifo {
                    max_table_files_size: FIFO_CAP,
                }),
            )
        },
        open_small: None,
        fifo_cap: Some(FIFO_CAP),
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod universal {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-universal",
        open: |d| Rocks::open_boxed(d, &small(Compaction::Universal)),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod blob {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-blob",
        open: |d| Rocks::open_boxed(d, &shrink(RocksConfig::blob())),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

mod tuned {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-tuned",
        open: |d| Rocks::open_boxed(d, &shrink(RocksConfig::tuned())),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

/// The named config (partitions of one flush each, so the suite's flushes
/// and reopens cross partition boundaries: deletes and overwrites must hide
/// older partitions), scaled down.
fn partitioned() -> PartitionedConfig {
    let named = PartitionedConfig::default();
    assert_eq!(named.partition_flushes, 1);
    PartitionedConfig {
        base: shrink(named.base),
        ..named
    }
}

mod partitioned {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-partitioned",
        open: |d| Partitioned::open_boxed(d, &partitioned()),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

/// The named sharded config (16 column families), scaled down.
fn sharded() -> ShardedConfig {
    let named = ShardedConfig::default();
    assert_eq!(named.shard_bits, 4);
    ShardedConfig {
        base: shrink(named.base),
        ..named
    }
}

mod sharded {
    use super::*;
    const S: Subject = Subject {
        name: "rocksdb-sharded",
        open: |d| Sharded::open_boxed(d, &sharded()),
        open_small: None,
        fifo_cap: None,
        durability: Durability::Process,
        map_writes: false,
    };
    conformance_suite!(S);
}

#[test]
fn shards_split_by_leading_bits_and_scan_in_key_order() {
    use ledgerbench_core::{Batch, KvStore};
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Sharded::open(dir.path(), &sharded()).expect("open");
    let mut b = Batch::new();
    // One key per shard, written in reverse, plus an empty key.
    for first in (0..16u8).rev() {
        b.put(&[first << 4, 1], &[first]);
    }
    b.put(b"", b"empty");
    s.write(&b).expect("write");
    s.flush().expect("flush");
    let st = s.stats().expect("stats");
    assert_eq!(st.extra["shards"], 16);
    // Every shard flushed its own table: the keys were spread, not kept
    // in one family.
    let files: u64 = st.files_per_level.expect("levels").iter().sum();
    assert_eq!(files, 16, "one table per shard");
    assert_eq!(
        st.running_compactions,
        Some(0),
        "counted once, not per shard"
    );
    let keys: Vec<Vec<u8>> = s
        .scan_collect(&[0x35], 100)
        .expect("scan")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let want: Vec<Vec<u8>> = (4..16u8).map(|f| vec![f << 4, 1]).collect();
    assert_eq!(keys, want, "from the start key's shard on, in order");
    assert_eq!(s.get(b"").expect("get"), Some(b"empty".to_vec()));
    let bad = ShardedConfig {
        shard_bits: 9,
        ..sharded()
    };
    let e = Sharded::open(&dir.path().join("bad"), &bad)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("shard_bits"), "{e}");
    assert!(
        !dir.path().join("bad").exists(),
        "nothing made for a bad config"
    );
}

#[test]
fn partitions_are_sealed_per_flush_and_lookups_fan_out_newest_first() {
    use ledgerbench_core::{Batch, KvStore};
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = 3 << 20;
    let cfg = PartitionedConfig {
        base: RocksConfig {
            block_cache_bytes: cache,
            ..partitioned().base
        },
        ..partitioned()
    };
    let s = Partitioned::open(dir.path(), &cfg).expect("open");
    for round in 0..3u8 {
        let mut b = Batch::new();
        b.put(&[round], &[round]);
        b.put(b"shared", &[round]);
        if round == 2 {
            b.delete(&[0]);
        }
        s.write(&b).expect("write");
        s.flush().expect("flush");
    }
    let st = s.stats().expect("stats");
    assert_eq!(st.extra["partitions"], 4, "three sealed and one active");
    // The data family runs with the store's options (RocksDB's defaults
    // would give each partition a private 32 MiB cache).
    assert_eq!(st.extra["block_cache_capacity_bytes"], cache);
    // Every partition shares one statistics object: its counters are
    // counted once (not once per open partition) and keep what the closed
    // instances counted, so each flushed byte appears once.
    let (flushed, live) = (
        st.flush_write_bytes.expect("flush"),
        st.sst_bytes.expect("sst"),
    );
    assert!(flushed > 0, "three flushes counted");
    assert!(
        flushed < 2 * live,
        "flush bytes {flushed} counted more than once against {live} live bytes"
    );
    assert_eq!(s.get(b"shared").expect("get"), Some(vec![2]), "newest wins");
    assert_eq!(
        s.get(&[1]).expect("get"),
        Some(vec![1]),
        "found in an older partition"
    );
    assert_eq!(s.get(&[0]).expect("get"), None, "a newer delete hides it");
    let probes = s.stats().expect("stats").extra["partition_probes"];
    // shared: 2 probes (empty active, then the newest sealed); [1]: 3; [0]: 2.
    assert_eq!(probes, 7);
    let keys: Vec<Vec<u8>> = s
        .scan_collect(b"", 10)
        .expect("scan")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, vec![vec![1], vec![2], b"shared".to_vec()]);
    drop(s);
    let s = Partitioned::open(dir.path(), &cfg).expect("reopen");
    let st = s.stats().expect("stats");
    assert_eq!(st.extra["partitions"], 4);
    assert_eq!(st.extra["block_cache_capacity_bytes"], cache);
    assert_eq!(s.get(&[0]).expect("get"), None);
    assert_eq!(s.get(b"shared").expect("get"), Some(vec![2]));
}

#[test]
fn invalid_config_is_refused_before_touching_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("s");
    let cfg = RocksConfig {
        write_buffer_size: 10,
        ..RocksConfig::default()
    };
    let err = Rocks::open(&store, &cfg)
        .err()
        .expect("tiny memtable refused");
    assert!(err.to_string().contains("write_buffer_size"), "{err}");
    assert!(
        !store.exists(),
        "a refused config must not create the store"
    );
}

#[test]
fn a_trace_of_several_databases_is_refused_naming_the_ones_that_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let traced = |mut base: RocksConfig| {
        base.trace_dir = Some(dir.path().join("traces"));
        base
    };
    let sharded = ShardedConfig {
        base: traced(sharded().base),
        ..sharded()
    };
    let partitioned = PartitionedConfig {
        base: traced(partitioned().base),
        ..partitioned()
    };
    let errors = [
        Sharded::open(&dir.path().join("s"), &sharded)
            .err()
            .map(|e| e.to_string()),
        Partitioned::open(&dir.path().join("p"), &partitioned)
            .err()
            .map(|e| e.to_string()),
    ];
    for (e, what) in errors
        .iter()
        .zip(["a sharded store", "a partitioned store"])
    {
        let e = e.as_deref().expect("refused");
        assert!(
            e.contains(what) && e.contains("trace with rocksdb-leveled"),
            "{e}"
        );
    }
    assert!(!dir.path().join("traces").exists());
}

#[test]
fn fifo_needs_unlimited_open_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = RocksConfig {
        max_open_files: 5000,
        ..RocksConfig::fifo(1 << 20)
    };
    let err = Rocks::open(&dir.path().join("s"), &cfg)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("max_open_files = -1"), "{err}");
}

#[test]
fn version_is_read_from_the_store_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Rocks::open(dir.path(), &small(Compaction::Leveled)).expect("open");
    let v = ledgerbench_rocksdb::engine_version(dir.path()).expect("LOG names the version");
    assert!(v.starts_with(char::is_numeric), "{v}");
    drop(store);
}
