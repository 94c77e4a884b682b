//! The only place that names every backend: names -> typed configs -> open
//! stores. Adding an engine is its crate (a `KvBackend`) plus a line in
//! `engines!` and a line per named config in `NAMED`; everything else
//! (runs, the crash test, benches, reports) asks a [`BackendSpec`] what the
//! engine can do and never names one.

use std::path::Path;

use ledgerbench_core::{Durability, KvBackend, KvStore, ReadPath, Tuning};
use ledgerbench_fjall::{Fjall, FjallConfig};
use ledgerbench_gokv::{Bridge, Go, GoConfig, GoEngine};
use ledgerbench_lmdb::{Lmdb, LmdbConfig};
use ledgerbench_mdbx::{Mdbx, MdbxConfig};
use ledgerbench_mem::{Mem, MemConfig, Null, NullConfig, Planted};
use ledgerbench_redb::{Redb, RedbConfig};
use ledgerbench_rocksdb::{
    Compaction, Partitioned, PartitionedConfig, Rocks, RocksConfig, Sharded, ShardedConfig,
};
use serde::{Deserialize, Serialize};

/// Every engine ledgerbench links, once: `Variant(Config) => Backend`. The
/// variant names the engine in results (`"engine": "rocksdb"`); everything
/// an engine does for the harness is a [`KvBackend`] method, dispatched here.
macro_rules! engines {
    ($($(#[$doc:meta])* $variant:ident($config:ty) => $backend:ty,)*) => {
        /// A backend's typed config, tagged with its engine: what results record.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "engine", rename_all = "kebab-case")]
        pub enum EngineConfig {
            $($(#[$doc])* $variant($config),)*
        }

        /// Runs every engine's process-wide setup (see
        /// [`KvBackend::init_process`]); call once at the start of a program.
        pub fn init_process() {
            $(<$backend>::init_process();)*
        }

        impl BackendSpec {
            /// Opens (creating) the store in `dir`.
            /// Every directory in it is then synced (see
            /// [`ledgerbench_core::fsutil::sync_dirs`]).
            pub fn open(&self, dir: &Path) -> ledgerbench_core::Result<Box<dyn KvStore>> {
                // Inside an engine scope, as every call on the store is:
                // the counting allocator puts a Rust engine's heap in the
                // engine's column, not the harness's.
                let store = ledgerbench_core::Attributed::open(|| match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::open_boxed(dir, c),)*
                })?;
                ledgerbench_core::fsutil::sync_dirs(dir).map_err(|source| {
                    ledgerbench_core::Error::Io {
                        engine: store.engine(),
                        op: ledgerbench_core::Op::Open,
                        path: dir.to_path_buf(),
                        source,
                    }
                })?;
                Ok(store)
            }

            /// Sets the engine settings that give durability `level`.
            pub fn set_durability(&mut self, level: Durability) -> ledgerbench_core::Result<()> {
                match &mut self.config {
                    $(EngineConfig::$variant(c) => <$backend>::set_durability(c, level),)*
                }
            }

            /// The durability level the settings give now.
            pub fn durability(&self) -> Durability {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::durability(c),)*
                }
            }

            /// The engine library's version (RocksDB's is read from a store's LOG).
            pub fn engine_version(&self, store_dir: &Path) -> Option<String> {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::version(c, store_dir),)*
                }
            }

            /// Why the engine cannot run on this machine, or `None`.
            pub fn unavailable(&self) -> Option<String> {
                match &self.config {
                    $(EngineConfig::$variant(_) => <$backend>::unavailable(),)*
                }
            }

            /// How the config's GETs reach the device.
            pub fn read_path(&self) -> ReadPath {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::read_path(c),)*
                }
            }

            /// Applies `tuning` where the engine has such a setting; false
            /// when it has none (the config is then unchanged).
            pub fn tune(&mut self, tuning: Tuning) -> bool {
                match &mut self.config {
                    $(EngineConfig::$variant(c) => <$backend>::tune(c, tuning),)*
                }
            }

            /// Whether the config makes the engine drop its oldest data by
            /// itself (FIFO): such a store does not keep what it was given.
            pub fn evicts_oldest(&self) -> bool {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::evicts_oldest(c),)*
                }
            }

            /// Whether the config keeps nothing it is given (the null
            /// engines): default backend lists leave it out.
            pub fn discards_writes(&self) -> bool {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::discards_writes(c),)*
                }
            }

            /// How ledgerbench's calls reach the engine.
            pub fn call_path(&self) -> ledgerbench_core::CallPath {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::call_path(c),)*
                }
            }

            /// Scales the engine's memory budget (memtables, caches) to
            /// `bytes`, for presets that shrink a workload while keeping its
            /// shape; every change lands in the recorded config.
            pub fn scale_memory(&mut self, bytes: u64) {
                match &mut self.config {
                    $(EngineConfig::$variant(c) => <$backend>::scale_memory(c, bytes),)*
                }
            }

            /// The smallest budget the engine keeps as given (0: any).
            pub fn memory_floor(&self) -> u64 {
                match &self.config {
                    $(EngineConfig::$variant(c) => <$backend>::memory_floor(c),)*
                }
            }
        }
    };
}

engines! {
    /// RocksDB.
    Rocksdb(RocksConfig) => Rocks,
    /// RocksDB, a new database every N batches (range partitions).
    RocksdbPartitioned(PartitionedConfig) => Partitioned,
    /// RocksDB, a column family per leading key bits (hash-prefix shards).
    RocksdbSharded(ShardedConfig) => Sharded,
    /// LMDB through heed.
    Lmdb(LmdbConfig) => Lmdb,
    /// MDBX through libmdbx.
    Mdbx(MdbxConfig) => Mdbx,
    /// In-memory reference.
    Mem(MemConfig) => Mem,
    /// Discards writes: the harness's own ceiling.
    Null(NullConfig) => Null,
    /// redb, a pure-Rust copy-on-write B-tree.
    Redb(RedbConfig) => Redb,
    /// fjall, a pure-Rust LSM tree.
    Fjall(FjallConfig) => Fjall,
    /// A Go engine, in process or through the sidecar.
    Go(GoConfig) => Go,
}

/// A name users give and the default config behind it.
type Named = (&'static str, fn() -> EngineConfig);

/// Every named backend config. FIFO gets a 1 GiB cap unless a preset or
/// run file sets one.
const NAMED: &[Named] = &[
    ("rocksdb-leveled", || {
        EngineConfig::Rocksdb(RocksConfig::default())
    }),
    ("rocksdb-fifo", || {
        EngineConfig::Rocksdb(RocksConfig::fifo(1 << 30))
    }),
    ("rocksdb-universal", || {
        EngineConfig::Rocksdb(RocksConfig {
            compaction: Compaction::Universal,
            ..RocksConfig::default()
        })
    }),
    (
        "rocksdb-blob",
        || EngineConfig::Rocksdb(RocksConfig::blob()),
    ),
    ("rocksdb-tuned", || {
        EngineConfig::Rocksdb(RocksConfig::tuned())
    }),
    ("rocksdb-partitioned", || {
        EngineConfig::RocksdbPartitioned(PartitionedConfig::default())
    }),
    ("rocksdb-sharded", || {
        EngineConfig::RocksdbSharded(ShardedConfig::default())
    }),
    ("lmdb", || EngineConfig::Lmdb(LmdbConfig::default())),
    ("mdbx", || EngineConfig::Mdbx(MdbxConfig::default())),
    ("mem", || EngineConfig::Mem(MemConfig::default())),
    ("null", || EngineConfig::Null(NullConfig::default())),
    ("redb", || EngineConfig::Redb(RedbConfig::default())),
    ("fjall", || EngineConfig::Fjall(FjallConfig::default())),
    ("pebble", || {
        EngineConfig::Go(GoConfig::of(GoEngine::Pebble))
    }),
    ("goleveldb", || {
        EngineConfig::Go(GoConfig::of(GoEngine::Goleveldb))
    }),
    ("badger", || {
        EngineConfig::Go(GoConfig::of(GoEngine::Badger))
    }),
    ("bbolt", || EngineConfig::Go(GoConfig::of(GoEngine::Bbolt))),
    ("go-null", || EngineConfig::Go(GoConfig::of(GoEngine::Null))),
    ("go-null-sidecar", || {
        EngineConfig::Go(GoConfig {
            bridge: Bridge::Sidecar,
            ..GoConfig::of(GoEngine::Null)
        })
    }),
];

/// Configs with a planted durability bug, accepted by name and never listed:
/// the crash tests' check that they catch what they claim to. Each is the
/// in-memory engine with a commit index beside its log, at `power`.
const PLANTED: &[Named] = &[
    ("planted-barrier", || {
        EngineConfig::Mem(MemConfig {
            log: ledgerbench_mem::MemLog::Sync,
            planted: Some(Planted::IndexAfterSync),
            ..MemConfig::default()
        })
    }),
    ("planted-no-barrier", || {
        EngineConfig::Mem(MemConfig {
            log: ledgerbench_mem::MemLog::Sync,
            planted: Some(Planted::IndexNoBarrier),
            ..MemConfig::default()
        })
    }),
];

/// Backend config names accepted by `--backends`, `--backend` and `--store`.
pub fn names() -> impl Iterator<Item = &'static str> {
    NAMED.iter().map(|(n, _)| *n)
}

/// Backends a run uses when none is named: the four engines users compare.
pub const DEFAULT_BACKENDS: &[&str] = &["rocksdb-leveled", "rocksdb-fifo", "lmdb", "mdbx"];

/// [`DEFAULT_BACKENDS`] as a flag value (clap defaults need a literal).
pub const DEFAULT_LIST: &str = "rocksdb-leveled,rocksdb-fifo,lmdb,mdbx";

/// The backends point reads use when none is named: FIFO is left out, its
/// reads are leveled RocksDB's without the compaction.
pub const POINT_READ_LIST: &str = "rocksdb-leveled,lmdb,mdbx";

/// The backends a lookup fan-out uses when none is named: a partition per
/// batch against one database and hash-prefix shards.
pub const FAN_OUT_LIST: &str = "rocksdb-partitioned,rocksdb-leveled,rocksdb-sharded";

/// The environment variable that replaces the default backend list.
pub const BACKENDS_ENV: &str = "LEDGERBENCH_BACKENDS";

/// A named backend config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendSpec {
    /// Name, e.g. `rocksdb-fifo`.
    pub name: String,
    /// Its settings.
    pub config: EngineConfig,
}

/// An unknown backend name, with the accepted ones.
#[derive(Debug)]
pub struct UnknownBackend(pub String);

impl std::fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown backend `{}`; accepted: {}",
            self.0,
            names().collect::<Vec<_>>().join(", ")
        )
    }
}

impl std::error::Error for UnknownBackend {}

impl BackendSpec {
    /// The default config behind a name.
    pub fn by_name(name: &str) -> Result<Self, UnknownBackend> {
        let (_, make) = NAMED
            .iter()
            .chain(PLANTED)
            .find(|(n, _)| *n == name)
            .ok_or_else(|| UnknownBackend(name.to_string()))?;
        Ok(Self {
            name: name.to_string(),
            config: make(),
        })
    }

    /// Refuses settings that give another level than the run's: an override
    /// (`--set`, a run file) that changed a sync setting would otherwise
    /// compare engines at different durability under one label.
    pub fn check_durability(&self, level: Durability) -> anyhow::Result<()> {
        let got = self.durability();
        if got != level {
            anyhow::bail!(
                "backend `{}`: its settings give durability `{got}`, not the run's `{level}` \
                 (an override changed a sync setting); drop the override or pass --durability {got}",
                self.name
            );
        }
        Ok(())
    }

    /// Applies a TOML table of overrides to the config, refusing unknown keys.
    pub fn apply_overrides(&mut self, table: &toml::Table) -> anyhow::Result<()> {
        let mut current = toml::Table::try_from(&self.config)?;
        merge_toml(&mut current, table);
        self.config = current
            .try_into()
            .map_err(|e| anyhow::anyhow!("backend `{}`: {e}", self.name))?;
        Ok(())
    }
}

/// Merges `from` into `into`, table by table: a key of `from` replaces the
/// same key of `into`, except tables, which merge (run files and `--set`
/// lines change one setting, not a whole table).
pub fn merge_toml(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge_toml(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Applies `--set BACKEND.KEY=VALUE` overrides (VALUE in TOML syntax, e.g.
/// `rocksdb-leveled.use_direct_reads=true`) to the named specs. A backend
/// not in the run, a malformed line or an unknown key is an error, so a
/// typo never silently runs the default.
pub fn apply_sets(specs: &mut [BackendSpec], sets: &[String]) -> anyhow::Result<()> {
    for line in sets {
        let (backend, table) = parse_set(line)?;
        let spec = specs
            .iter_mut()
            .find(|s| s.name == backend)
            .ok_or_else(|| {
                anyhow::anyhow!("--set `{line}`: backend `{backend}` is not in this run")
            })?;
        spec.apply_overrides(&table)?;
    }
    Ok(())
}

/// Parses one `--set BACKEND.KEY=VALUE` into the backend's name and a
/// TOML table of the one setting.
pub fn parse_set(line: &str) -> anyhow::Result<(String, toml::Table)> {
    let (lhs, value) = line.split_once('=').ok_or_else(|| {
        anyhow::anyhow!(
            "--set `{line}`: expected BACKEND.KEY=VALUE, e.g. rocksdb-leveled.use_direct_reads=true"
        )
    })?;
    let (backend, key) = lhs.trim().split_once('.').ok_or_else(|| {
        anyhow::anyhow!(
            "--set `{line}`: expected BACKEND.KEY=VALUE (no `.` after the backend name)"
        )
    })?;
    let table: toml::Table = toml::from_str(&format!("{key} = {}", value.trim()))
        .map_err(|e| anyhow::anyhow!("--set `{line}`: value is not TOML ({e}); quote strings"))?;
    Ok((backend.to_string(), table))
}

/// Parses a comma-separated backend list, refusing unknown and repeated
/// names; each gets the settings of durability `level`.
pub fn parse_list(list: &str, level: Durability) -> Result<Vec<BackendSpec>, anyhow::Error> {
    let mut out: Vec<BackendSpec> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if out.iter().any(|s| s.name == name) {
            anyhow::bail!("backend `{name}` is named twice");
        }
        let mut spec = BackendSpec::by_name(name)?;
        spec.set_durability(level)
            .map_err(|e| anyhow::anyhow!("backend `{name}` at --durability {level}: {e}"))?;
        out.push(spec);
    }
    if out.is_empty() {
        anyhow::bail!(
            "no backend named (--backends NAME,NAME...); accepted: {}",
            names().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
