//! Point get (hot), batch commit of 1 / 100 / 10,000 puts and ordered scan,
//! through the same `KvStore` trait the driver uses: one criterion group per
//! operation, one `BenchmarkId` per backend, so criterion's report puts the
//! backends side by side. Keys are generated before the timed closures.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ledgerbench_benches::{key, open_all, value};
use ledgerbench_core::{Batch, KvStore};

const PRELOAD: u64 = 50_000;
const SCAN: usize = 1000;

/// Every backend of the registry, open and preloaded with `PRELOAD` entries.
fn preloaded(dir: &tempfile::TempDir) -> Vec<(String, Box<dyn KvStore>)> {
    open_all(dir.path())
        .into_iter()
        .map(|(name, store)| {
            let mut b = Batch::new();
            for i in 0..PRELOAD {
                b.put(&key(i), &value(i));
                // Chunks every engine takes at its bench-sized memory
                // (Badger refuses a transaction over a share of its memtable).
                if b.len() == 1_000 {
                    store.write(&b).expect("preload");
                    b.clear();
                }
            }
            store.flush().expect("flush");
            (name, store)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = preloaded(&dir);
    // Lookup keys in a scattered order, made before any timing.
    let keys: Vec<[u8; 32]> = (0..4096u64).map(|j| key(j * 7919 % PRELOAD)).collect();
    // Scan starts at least SCAN entries before the end of the key order, so
    // every scan must return exactly SCAN entries.
    let mut sorted: Vec<[u8; 32]> = (0..PRELOAD).map(key).collect();
    sorted.sort_unstable();
    let starts: Vec<[u8; 32]> = (0..512)
        .map(|j| sorted[j * 7919 % (PRELOAD as usize - SCAN)])
        .collect();
    get(c, &stores, &keys);
    commit(c, &stores);
    scan(c, &stores, &starts);
    for (_, s) in stores {
        s.close().expect("close");
    }
}

type Stores = [(String, Box<dyn KvStore>)];

/// Point gets of preloaded keys, each store's cache warm.
fn get(c: &mut Criterion, stores: &Stores, keys: &[[u8; 32]]) {
    let mut g = c.benchmark_group("get");
    g.throughput(Throughput::Elements(1));
    for (name, store) in stores {
        let (mut i, mut buf) = (0usize, Vec::new());
        g.bench_with_input(BenchmarkId::new(name, "hot"), store, |bch, store| {
            bch.iter(|| {
                i = (i + 1) % keys.len();
                assert!(store.get_into(&keys[i], &mut buf).expect("get"));
                black_box(buf.len())
            })
        });
    }
    g.finish();
}

/// Batch commits of 1, 100 and 10,000 new keys.
fn commit(c: &mut Criterion, stores: &Stores) {
    let mut g = c.benchmark_group("commit");
    let mut next = PRELOAD;
    for n in [1u64, 100, 10_000] {
        g.throughput(Throughput::Elements(n));
        if n == 10_000 {
            g.sample_size(10);
        }
        for (name, store) in stores {
            // One commit of this size outside the timing: an engine that
            // refuses it (a batch over its transaction limit) is left out
            // of this size, with its reason, instead of ending every bench.
            let mut probe = Batch::with_capacity(n as usize, n as usize * 1182);
            for _ in 0..n {
                probe.put(&key(next), &value(next));
                next += 1;
            }
            if let Err(e) = store.write(&probe) {
                eprintln!("benches: {name} left out of commit/{n}-puts: {e}");
                continue;
            }
            g.bench_with_input(
                BenchmarkId::new(name, format!("{n}-puts")),
                store,
                |bch, store| {
                    bch.iter_batched_ref(
                        || {
                            let mut b = Batch::with_capacity(n as usize, n as usize * 1182);
                            for _ in 0..n {
                                b.put(&key(next), &value(next));
                                next += 1;
                            }
                            b
                        },
                        |b| store.write(b).expect("commit"),
                        BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    g.finish();
}

/// Ordered scans of `SCAN` entries from random starts, where the engine
/// iterates in order.
fn scan(c: &mut Criterion, stores: &Stores, starts: &[[u8; 32]]) {
    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(SCAN as u64));
    for (name, store) in stores
        .iter()
        .filter(|(_, s)| s.capabilities().ordered_iteration)
    {
        let mut j = 0usize;
        g.bench_with_input(
            BenchmarkId::new(name, format!("{SCAN}-from-random")),
            store,
            |bch, store| {
                bch.iter(|| {
                    j = (j + 1) % starts.len();
                    let mut n = 0;
                    store
                        .scan(&starts[j], &mut |k, v| {
                            black_box((k, v));
                            n += 1;
                            n < SCAN
                        })
                        .expect("scan");
                    assert_eq!(n, SCAN, "{name}: a scan returned {n} entries, not {SCAN}");
                    n
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
