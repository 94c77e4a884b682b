//! Statistics, disk usage, FIFO eviction and compaction as the capabilities say.

use ledgerbench_core::{Error, Op};

use crate::{Scratch, Subject, put_all, random_bytes, rng};

/// Every statistic the engine reports is real: present fields agree with
/// what was written, so a hard-coded zero or a made-up count fails here.
pub fn stats_are_real_or_absent(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let n = 3000u64;
    let mut r = rng(5);
    let pairs: Vec<_> = (0..n)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 400)))
        .collect();
    put_all(&*st, &pairs);
    st.flush().unwrap();
    let stats = st.stats().unwrap();
    let name = s.name;
    if let Some(e) = stats.entries {
        assert_eq!(e, n, "{name}: entries");
    }
    if let Some(d) = stats.tree_depth {
        assert!((1..=6).contains(&d), "{name}: depth {d}");
    }
    if let (Some(l), Some(ps)) = (stats.leaf_pages, stats.page_size) {
        // 3000 x 432 bytes of data cannot fit in fewer pages than this.
        assert!(l * u64::from(ps) >= n * 432 / 2, "{name}: leaf pages {l}");
    }
    if let Some(f) = stats.flush_write_bytes {
        assert!(
            f >= n * 432 / 2,
            "{name}: flush bytes {f} after flushing {} bytes",
            n * 432
        );
    }
    if let Some(w) = stats.wal_bytes {
        assert!(w >= n * 432, "{name}: wal bytes {w}");
    }
    if let Some(sst) = stats.sst_bytes {
        // Values in BlobDB's blob files are not in the SSTs.
        let blobs = stats
            .extra
            .get("live_blob_file_bytes")
            .copied()
            .unwrap_or(0);
        assert!(
            sst + blobs >= n * 432 / 2,
            "{name}: sst bytes {sst} + blob bytes {blobs}"
        );
    }
    // An engine that counts flush bytes writes tables when it flushes
    // (goleveldb's and Badger's flush syncs their log instead).
    if let (Some(files), Some(_)) = (&stats.files_per_level, stats.flush_write_bytes) {
        assert!(
            files.iter().sum::<u64>() >= 1,
            "{name}: no SST after a flush"
        );
    }
    if let Some(p) = stats.page_ops {
        assert!(
            p.newly > 0,
            "{name}: MDBX reports no new pages after writing"
        );
    }
    let json = serde_json::to_string(&stats).unwrap();
    assert!(
        !json.contains("null"),
        "{name}: absent stats must be omitted, not null: {json}"
    );
    st.close().unwrap();
}

/// On-disk size counts allocated blocks and grows with the data.
pub fn disk_usage_tracks_data(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    if !st.capabilities().persistent {
        return;
    }
    let before = st.disk_usage().unwrap();
    let mut r = rng(9);
    // 4 MiB of incompressible values.
    let pairs: Vec<_> = (0..1024u32)
        .map(|i| (i.to_be_bytes().to_vec(), random_bytes(&mut r, 4096)))
        .collect();
    put_all(&*st, &pairs);
    st.flush().unwrap();
    let after = st.disk_usage().unwrap();
    assert!(after.files >= 1);
    assert!(
        after.allocated_bytes >= before.allocated_bytes + (3 << 20),
        "{}: allocated {} -> {} after writing 4 MiB",
        s.name,
        before.allocated_bytes,
        after.allocated_bytes
    );
    st.close().unwrap();
}

/// A FIFO config drops its oldest data once over its cap; every other config keeps everything.
pub fn fifo_drops_oldest_over_cap(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let evicts = st.capabilities().evicts_oldest;
    assert_eq!(
        evicts,
        s.fifo_cap.is_some(),
        "{}: capability disagrees with config",
        s.name
    );
    let mut r = rng(13);
    let cap = s.fifo_cap.unwrap_or(4 << 20);
    // Increasing keys, ~6x the cap, flushed in ~cap/4 chunks so files form.
    let value_len = 4096usize;
    let per_chunk = (cap / 4 / value_len as u64).max(1) as u32;
    let chunks = 24u32;
    let mut key = 0u32;
    for _ in 0..chunks {
        let pairs: Vec<_> = (0..per_chunk)
            .map(|_| {
                key += 1;
                (key.to_be_bytes().to_vec(), random_bytes(&mut r, value_len))
            })
            .collect();
        put_all(&*st, &pairs);
        st.flush().unwrap();
    }
    let first = 1u32.to_be_bytes();
    let last = key.to_be_bytes();
    assert!(
        st.get(&last).unwrap().is_some(),
        "{}: newest key lost",
        s.name
    );
    if evicts {
        // FIFO drops files in a compaction; run one instead of racing the background.
        if st.capabilities().manual_compaction {
            st.compact().unwrap();
        }
        assert_eq!(
            st.get(&first).unwrap(),
            None,
            "{}: oldest key kept past the FIFO cap",
            s.name
        );
        let used = st
            .stats()
            .unwrap()
            .sst_bytes
            .unwrap_or(st.disk_usage().unwrap().allocated_bytes);
        assert!(
            used <= cap * 2,
            "{}: {used} bytes kept with a cap of {cap}",
            s.name
        );
    } else {
        assert!(
            st.get(&first).unwrap().is_some(),
            "{}: non-FIFO store dropped data",
            s.name
        );
    }
    st.close().unwrap();
}

/// `compact` works exactly when the capabilities say it does.
pub fn compaction_matches_capabilities(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    put_all(&*st, &[(b"k".to_vec(), b"v".to_vec())]);
    match (st.capabilities().manual_compaction, st.compact()) {
        (true, Ok(())) => {}
        (
            false,
            Err(Error::Unsupported {
                op: Op::Compact, ..
            }),
        ) => {}
        (cap, res) => panic!(
            "{}: manual_compaction={cap} but compact() gave {res:?}",
            s.name
        ),
    }
    assert_eq!(st.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    st.close().unwrap();
}

/// Engine byte counters read across a reopen: the growth is real or
/// absent, never a silent 0 (RocksDB's tickers restart at 0 on open).
pub fn counter_deltas_survive_a_reopen(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut r = rng(31);
    let big: Vec<_> = (0..2000)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 400)))
        .collect();
    put_all(&*st, &big);
    st.flush().unwrap();
    let before = st.stats().unwrap().engine_write_bytes();
    let st = crate::reopen(s, st);
    let small: Vec<_> = (0..10)
        .map(|_| (random_bytes(&mut r, 32), random_bytes(&mut r, 400)))
        .collect();
    put_all(&*st, &small);
    st.flush().unwrap();
    let after = st.stats().unwrap().engine_write_bytes();
    let d = ledgerbench_core::counter_delta(after, before);
    assert_ne!(
        d,
        Some(0),
        "{}: {before:?} -> {after:?} read as no growth",
        s.name
    );
    if let (Some(a), Some(b), Some(d)) = (after, before, d) {
        assert!(a > b && d >= 10 * 400 / 2, "{}: {b} -> {a}", s.name);
    }
    st.close().unwrap();
}
