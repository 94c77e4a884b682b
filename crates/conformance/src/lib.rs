//! One conformance suite that every backend and config must pass.
//!
//! A backend crate instantiates it once per config with
//! [`conformance_suite!`], which expands to one `#[test]` per case, so a
//! failure names the backend, the config and the case. Each case is a plain
//! function over a [`Subject`], so the suite itself stays engine-free.
#![allow(clippy::unwrap_used)]

mod basics;
mod edges;
mod engine;
mod errors;
mod ranges;
mod reopen;
mod smallfs;

pub use basics::*;
pub use edges::*;
pub use engine::*;
pub use errors::*;
pub use ranges::*;
pub use reopen::*;

use std::path::{Path, PathBuf};

use ledgerbench_core::{Batch, Durability, KvStore, Result};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Opens a store of the config under test in a directory.
pub type Opener = fn(&Path) -> Result<Box<dyn KvStore>>;

/// A backend config under test.
pub struct Subject {
    /// Name used in messages, e.g. `rocksdb-fifo`.
    pub name: &'static str,
    /// Opens the store with the config under test.
    pub open: Opener,
    /// Opens the store with a size cap of about `SMALL_CAP` bytes, for engines
    /// whose size is bounded by config (LMDB map size, MDBX upper geometry).
    pub open_small: Option<Opener>,
    /// For configs that evict the oldest data (FIFO): the size cap in bytes.
    pub fifo_cap: Option<u64>,
    /// The durability level the config gives (what a drop or kill -9 may lose).
    pub durability: Durability,
    /// Writes go through a writable memory map, so a full disk is a SIGBUS
    /// for the process, not an error a write can return.
    pub map_writes: bool,
}

/// Size cap, in bytes, that `Subject::open_small` configures.
pub const SMALL_CAP: u64 = 1 << 20;

/// A fresh, empty scratch directory removed on drop.
pub struct Scratch {
    _dir: tempfile::TempDir,
    /// Path where the store goes (does not exist yet).
    pub store: PathBuf,
}

impl Scratch {
    /// Makes a new scratch directory.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("ledgerbench-conf-")
            .tempdir()
            .expect("create scratch dir");
        let store = dir.path().join("store");
        Self { _dir: dir, store }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

pub(crate) fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub(crate) fn random_bytes(r: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

pub(crate) fn put_all(store: &dyn KvStore, pairs: &[(Vec<u8>, Vec<u8>)]) {
    let mut b = Batch::new();
    for (k, v) in pairs {
        b.put(k, v);
    }
    store.write(&b).unwrap();
}

pub(crate) fn reopen(s: &Subject, store: Box<dyn KvStore>) -> Box<dyn KvStore> {
    let path = store.path().to_path_buf();
    store.close().unwrap();
    (s.open)(&path).unwrap_or_else(|e| panic!("{}: reopen failed: {e}", s.name))
}

/// Instantiates the whole suite as `#[test]` functions for one [`Subject`].
#[macro_export]
macro_rules! conformance_suite {
    ($subject:expr) => {
        $crate::conformance_suite!(@cases $subject;
            put_get_overwrite_delete,
            missing_key_is_none,
            batch_is_all_or_nothing_across_reopen,
            ordered_iteration,
            random_32_byte_keys,
            empty_and_large_values,
            synced_data_survives_reopen,
            reopen_after_drop_without_close,
            empty_batch_is_a_no_op,
            deletes_hide_keys_from_scans,
            overwrites_and_deletes_survive_flush_and_compaction,
            range_delete_removes_exactly_its_range,
            range_delete_survives_flush_and_compaction,
            high_bytes_and_prefix_boundaries,
            long_keys_work_or_fail_clearly,
            stats_are_real_or_absent,
            counter_deltas_survive_a_reopen,
            disk_usage_tracks_data,
            fifo_drops_oldest_over_cap,
            compaction_matches_capabilities,
            path_that_is_a_file_is_refused,
            unwritable_directory_is_refused,
            full_store_is_a_clear_error,
            corrupt_store_is_an_error,
            foreign_directory_is_refused
        );
        // Mounts a small tmpfs to fill: listed as ignored without root.
        #[test]
        #[ignore = "privileged: mounts a small tmpfs (root); scripts/test.sh runs it as root"]
        fn failed_batch_on_a_full_disk_leaves_nothing() {
            $crate::failed_batch_on_a_full_disk_leaves_nothing(&$subject);
        }
        // Re-runs this test binary as the child it kills, so it needs its own name.
        #[test]
        fn committed_batches_survive_kill_9_of_a_child() {
            let here = concat!(module_path!(), "::committed_batches_survive_kill_9_of_a_child");
            let name = here.split_once("::").map_or(here, |(_, rest)| rest);
            $crate::committed_batches_survive_kill_9_of_a_child(&$subject, name);
        }
    };
    (@cases $subject:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::$case(&$subject);
            }
        )*
    };
}
