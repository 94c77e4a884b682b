//! The shared conformance suite, run on every RocksDB config.

use kvbench_conformance::{Subject, conformance_suite};
use kvbench_core::{Durability, KvBackend};
use kvbench_rocksdb::{Compaction, Rocks, RocksConfig};

const FIFO_CAP: u64 = 8 << 20;

/// The report's options with memory scaled down so tests stay small.
fn small(compaction: Compaction) -> RocksConfig {
    let fifo = matches!(compaction, Compaction::Fifo { .. });
    RocksConfig {
        compaction,
        max_open_files: if fifo { -1 } else { 5000 },
        write_buffer_size: 1 << 20,
        max_write_buffer_number: 2,
        max_background_jobs: 2,
        ..RocksConfig::default()
    }
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
    let v = kvbench_rocksdb::engine_version(dir.path()).expect("LOG names the version");
    assert!(v.starts_with(char::is_numeric), "{v}");
    drop(store);
}
