//! Point get (hot), batch commit of 1 / 100 / 10,000 puts and ordered scan,
//! for every backend, through the same `KvStore` trait the driver uses.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kvbench_benches::{backends, key, value};
use kvbench_core::Batch;

const PRELOAD: u64 = 50_000;

fn bench(c: &mut Criterion) {
    for (name, open) in backends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(&dir.path().join("store")).expect("open");
        let mut b = Batch::new();
        for i in 0..PRELOAD {
            b.put(&key(i), &value(i));
            if b.len() == 10_000 {
                store.write(&b).expect("preload");
                b.clear();
            }
        }
        store.flush().expect("flush");

        let mut g = c.benchmark_group(format!("{name}/get"));
        g.throughput(Throughput::Elements(1));
        let mut i = 0u64;
        let mut buf = Vec::new();
        g.bench_function("hot", |bch| {
            bch.iter(|| {
                i = (i + 7919) % PRELOAD;
                black_box(store.get_into(&key(i), &mut buf).expect("get"))
            })
        });
        g.finish();

        let mut next = PRELOAD;
        for n in [1u64, 100, 10_000] {
            let mut g = c.benchmark_group(format!("{name}/commit"));
            g.throughput(Throughput::Elements(n));
            if n == 10_000 {
                g.sample_size(10);
            }
            g.bench_function(format!("{n}-puts"), |bch| {
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
            });
            g.finish();
        }

        let mut g = c.benchmark_group(format!("{name}/scan"));
        g.throughput(Throughput::Elements(1000));
        g.bench_function("1000-from-random", |bch| {
            bch.iter(|| {
                i = (i + 7919) % PRELOAD;
                let mut n = 0;
                store
                    .scan(&key(i), &mut |k, v| {
                        black_box((k, v));
                        n += 1;
                        n < 1000
                    })
                    .expect("scan");
                n
            })
        });
        g.finish();
        store.close().expect("close");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
