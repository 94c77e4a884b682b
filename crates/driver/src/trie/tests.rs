//! The trie protocol on the reference backend: every block's root against a
//! from-scratch root over the same accounts, every read against the
//! regenerated account, and the figures' own arithmetic.

use super::*;
use ledgerbench_core::KvBackend;
use ledgerbench_mem::{Mem, MemConfig};

fn cfg(dist: &str) -> TrieConfig {
    TrieConfig {
        seed: 5,
        accounts: 4000,
        blocks: 6,
        updates_per_block: 300,
        reads_per_block: 200,
        dist: dist.into(),
        load_batch: 700,
        ..TrieConfig::default()
    }
}

#[test]
fn every_block_root_matches_a_root_from_scratch_and_every_read_its_account() {
    for (scheme, dist) in [
        (Scheme::Hash, "hotcold"),
        (Scheme::Path, "zipf"),
        (Scheme::Path, "uniform"),
    ] {
        let c = cfg(dist);
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
        let (root, load) = load(&c, scheme, &*store, &mut ()).expect("load");
        assert_eq!(load.root, hex(&root));
        let entries = store.scan_collect(&[], usize::MAX).expect("scan").len() as u64;
        assert_eq!(
            entries,
            load.nodes + c.accounts,
            "{scheme:?}: nodes and flat entries"
        );
        let mut state = State::new(&c);
        assert_eq!(state.reference_root(&mut ()).expect("root"), root);
        let mut trie = Trie::new(&*store, scheme, root);
        let mut distinct = 0;
        for b in 1..=c.blocks {
            let rec = block(&mut state, &mut trie, &*store, &|| None, b).expect("block");
            assert!(rec.updates > 0 && rec.updates <= c.updates_per_block);
            distinct += rec.updates;
            assert_eq!(
                rec.root,
                hex(&state.reference_root(&mut ()).expect("root")),
                "{scheme:?} {dist} block {b}"
            );
            for pass in [&rec.trie, &rec.flat] {
                assert_eq!(pass.mismatches, 0, "{scheme:?} {dist} block {b}");
                assert_eq!(pass.reads, c.reads_per_block);
                let gets: u64 = pass.levels.iter().map(|l| l.gets).sum();
                assert!((gets as f64 - pass.gets_per_read * pass.reads as f64).abs() < 1e-6);
                // No private device: every device figure is absent, not 0.
                assert!(pass.device_reads_per_read.is_none());
                assert!(pass.levels.iter().all(|l| l.device_reads.is_none()));
            }
            assert_eq!(rec.flat.gets_per_read, 1.0);
            // 4,000 random keys: three or four levels of branches, then the leaf.
            assert!(
                (3.0..=5.0).contains(&rec.trie.gets_per_read),
                "{}",
                rec.trie.gets_per_read
            );
            assert!(rec.nodes_written > rec.updates);
        }
        let updated: u64 = state.versions.values().map(|v| u64::from(*v)).sum();
        assert_eq!(updated, distinct);
        if dist == "hotcold" {
            // 90% of picks land on 10% of accounts.
            assert!(state.versions.len() < 1400, "{}", state.versions.len());
        }
    }
}

#[test]
fn a_block_of_a_store_that_lost_its_trie_is_an_error_naming_it() {
    let c = cfg("uniform");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
    let mut state = State::new(&c);
    let mut trie = Trie::new(&*store, Scheme::Hash, [7; 32]);
    let e = block(&mut state, &mut trie, &*store, &|| None, 1).expect_err("no trie");
    assert!(e.to_string().contains("missing from the store"), "{e}");
}

#[test]
fn bad_settings_are_refused_with_what_is_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Mem::open_boxed(&dir.path().join("s"), &MemConfig::default()).expect("open");
    let bad = TrieConfig {
        dist: "pareto".into(),
        ..cfg("uniform")
    };
    let e = load(&bad, Scheme::Path, &*store, &mut ()).expect_err("refused");
    assert!(e.to_string().contains("uniform, hotcold, zipf"), "{e}");
}
