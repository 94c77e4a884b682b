//! Which Go engine a store runs and its settings.

use ledgerbench_core::{Durability, RangeDelete};
use serde::{Deserialize, Serialize};

/// Which Go engine a store runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GoEngine {
    /// CockroachDB's Pebble (v1.1), an LSM tree.
    Pebble,
    /// syndtr/goleveldb, LevelDB in Go.
    Goleveldb,
    /// Dgraph's Badger (v4), an LSM tree with a value log.
    Badger,
    /// etcd's bbolt, a copy-on-write B+tree.
    Bbolt,
    /// Nothing: the bridge's own cost (a cgo call in process, a socket
    /// round trip through the sidecar).
    Null,
}

impl GoEngine {
    /// The name the sidecar and results use.
    pub fn name(self) -> &'static str {
        match self {
            GoEngine::Pebble => "pebble",
            GoEngine::Goleveldb => "goleveldb",
            GoEngine::Badger => "badger",
            GoEngine::Bbolt => "bbolt",
            GoEngine::Null => "null",
        }
    }

    /// The longest key the engine stores, bytes (`None`: no limit below
    /// the frame's).
    pub fn max_key(self) -> Option<usize> {
        match self {
            GoEngine::Bbolt => Some(32_768),
            GoEngine::Badger => Some(65_000),
            _ => None,
        }
    }

    /// The smallest memtable ledgerbench gives the engine: Badger commits a
    /// batch in one transaction, which must fit in 15% of its memtable, so
    /// it keeps 64 MiB (batches up to about 9.6 MiB) even when asked for less.
    pub fn min_memtable(self) -> u64 {
        match self {
            GoEngine::Badger => 64 << 20,
            _ => 1 << 20,
        }
    }

    /// How the engine deletes a range: Pebble with one tombstone (the
    /// sidecar sends it its DeleteRange), the others a key at a time (the
    /// harness expands the range before sending); `null` keeps nothing.
    pub fn range_delete(self) -> Option<RangeDelete> {
        match self {
            GoEngine::Pebble => Some(RangeDelete::Native),
            GoEngine::Null => None,
            _ => Some(RangeDelete::Emulated),
        }
    }

    /// The pinned module version (`go/go.mod`; a test checks they agree),
    /// `None` for null, which is no library.
    pub fn version(self) -> Option<&'static str> {
        match self {
            GoEngine::Pebble => Some("1.1.5"),
            GoEngine::Goleveldb => Some("1.0.0"),
            GoEngine::Badger => Some("4.9.6"),
            GoEngine::Bbolt => Some("1.5.0"),
            GoEngine::Null => None,
        }
    }

    /// The module path in `go/go.mod`.
    pub fn module(self) -> Option<&'static str> {
        match self {
            GoEngine::Pebble => Some("github.com/cockroachdb/pebble"),
            GoEngine::Goleveldb => Some("github.com/syndtr/goleveldb"),
            GoEngine::Badger => Some("github.com/dgraph-io/badger/v4"),
            GoEngine::Bbolt => Some("go.etcd.io/bbolt"),
            GoEngine::Null => None,
        }
    }
}

/// How ledgerbench reaches a Go engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bridge {
    /// Loaded into ledgerbench's process as a shared library at the first
    /// Go open: a call is a cgo transition,
    /// and the Go runtime lives in the run's process and memory cgroup.
    #[default]
    InProcess,
    /// Served by `ledgerbench-sidecar`, a process per store, one socket
    /// round trip per call: kept to measure what that path costs
    /// (`go-null-sidecar`).
    Sidecar,
}

/// Settings of a Go engine; each engine reads the ones it has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoConfig {
    /// The Go engine (not `engine`: results tag every config with the
    /// backend's engine under that name).
    pub go_engine: GoEngine,
    /// Block cache, bytes (Pebble, goleveldb, Badger).
    pub cache_bytes: u64,
    /// Memtable size, bytes (Pebble, goleveldb's write buffer, Badger).
    pub memtable_bytes: u64,
    /// L0 files that start a compaction (Pebble, goleveldb, Badger); 0 keeps
    /// the engine's default.
    pub l0_compaction_trigger: u32,
    /// L0 files that stop writes (Pebble, goleveldb, Badger); 0: default.
    pub l0_stop_writes_trigger: u32,
    /// Concurrent compactions (Pebble, Badger); 0: default.
    pub max_concurrent_compactions: u32,
    /// The level asked for. Pebble: none disables the WAL; process and power
    /// sync it per commit, because a commit without the sync waits in
    /// Pebble's own WAL buffer and a kill -9 loses it. goleveldb and Badger always
    /// write their journal or value log, so none keeps what process keeps.
    /// bbolt: none sets NoSync; process and power sync every commit (without
    /// the sync a power cut may tear its B+tree, as LMDB's would).
    pub durability: Durability,
    /// Length of the value `null` answers a read with, bytes.
    pub value_bytes: u32,
    /// In process (the default) or through the sidecar; results record it.
    pub bridge: Bridge,
}

impl Default for GoConfig {
    fn default() -> Self {
        Self {
            go_engine: GoEngine::Pebble,
            cache_bytes: 64 << 20,
            memtable_bytes: 64 << 20,
            l0_compaction_trigger: 0,
            l0_stop_writes_trigger: 0,
            max_concurrent_compactions: 0,
            durability: Durability::Process,
            value_bytes: 256,
            bridge: Bridge::InProcess,
        }
    }
}

impl GoConfig {
    /// The default settings of `engine` (`null` at durability none: it
    /// keeps nothing).
    pub fn of(engine: GoEngine) -> Self {
        Self {
            go_engine: engine,
            durability: if engine == GoEngine::Null {
                Durability::None
            } else {
                Durability::Process
            },
            ..Self::default()
        }
    }
}
