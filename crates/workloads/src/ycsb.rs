//! YCSB core workloads A to F on one store (`usertable`): a load phase, then
//! the workload's mix of reads, updates, inserts, scans and
//! read-modify-writes under its request distribution.

use ledgerbench_rng::{Rng, mix, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};
use serde::{Deserialize, Serialize};

use crate::generated::GenError;

use crate::zipf::Zipf;

/// Settings of a YCSB run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct YcsbConfig {
    /// Core workload: a, b, c, d, e or f.
    pub workload: String,
    /// Records loaded.
    pub records: u64,
    /// Operations in the run phase.
    pub operations: u64,
    /// Value bytes (YCSB: 10 fields of 100 bytes).
    pub value_bytes: u32,
    /// Longest scan (workload E; lengths are uniform in 1..=max).
    pub scan_max: u32,
    /// Records per commit while loading.
    pub load_batch: u64,
    /// Operations per segment of the run phase (a mark each).
    pub ops_per_segment: u64,
    /// Zipfian constant.
    pub theta: f64,
}

impl Default for YcsbConfig {
    fn default() -> Self {
        Self {
            workload: "a".into(),
            records: 1_000_000,
            operations: 1_000_000,
            value_bytes: 1000,
            scan_max: 100,
            load_batch: 1000,
            ops_per_segment: 100_000,
            theta: 0.99,
        }
    }
}

/// The mix of a core workload: read, update, insert, scan, read-modify-write.
fn mix_of(w: &str) -> Option<[f64; 5]> {
    Some(match w {
        "a" => [0.5, 0.5, 0.0, 0.0, 0.0],
        "b" => [0.95, 0.05, 0.0, 0.0, 0.0],
        "c" => [1.0, 0.0, 0.0, 0.0, 0.0],
        "d" => [0.95, 0.0, 0.05, 0.0, 0.0],
        "e" => [0.0, 0.0, 0.05, 0.95, 0.0],
        "f" => [0.5, 0.0, 0.0, 0.0, 0.5],
        _ => return None,
    })
}

/// The YCSB generator.
pub struct Ycsb {
    cfg: YcsbConfig,
    header: Header,
    mix: [f64; 5],
    zipf: Zipf,
    rng: Rng,
    seed: u64,
    /// Global cursors: records loaded and run-phase operations issued by
    /// every thread together.
    loaded: u64,
    done_ops: u64,
    /// Records this thread inserted in the run phase.
    inserted: u64,
    /// This stream's thread and the number of threads (see [`Ycsb::thread`]).
    thread: u64,
    threads: u64,
}

impl Ycsb {
    /// A generator; refuses unknown workloads and empty sizes.
    pub fn new(seed: u64, cfg: YcsbConfig) -> Result<Self, GenError> {
        Self::thread(seed, cfg, 0, 1)
    }

    /// Client thread `thread` of `threads` running at once on one store:
    /// it loads the records `i % threads == thread`, issues its share of
    /// every segment's operations from its own seeded stream (thread 0's
    /// is the one-thread stream), and inserts keys of its own, which only
    /// it reads, so every read finds its key whatever the interleaving.
    /// Every thread's marks are the same, so marks can be barriers.
    pub fn thread(seed: u64, cfg: YcsbConfig, thread: u64, threads: u64) -> Result<Self, GenError> {
        if threads == 0 || thread >= threads {
            return Err(GenError::config(
                "ycsb",
                format!("thread {thread} of {threads}"),
            ));
        }
        let mix = mix_of(&cfg.workload).ok_or_else(|| {
            GenError::config(
                "ycsb",
                format!(
                    "unknown core workload `{}`; accepted a, b, c, d, e, f",
                    cfg.workload
                ),
            )
        })?;
        if cfg.records == 0 || cfg.load_batch == 0 || cfg.ops_per_segment == 0 || cfg.scan_max == 0
        {
            return Err(GenError::config(
                "ycsb",
                "records, load_batch, ops_per_segment and scan_max must be at least 1",
            ));
        }
        if !(0.0..1.0).contains(&cfg.theta) {
            return Err(GenError::config(
                "ycsb",
                format!("theta must be in [0, 1), not {}", cfg.theta),
            ));
        }
        Ok(Self {
            header: crate::generated::header(
                &format!("ycsb-{}", cfg.workload),
                seed,
                &["usertable"],
                &cfg,
            ),
            mix,
            zipf: Zipf::new(cfg.records, cfg.theta),
            rng: Rng::new(stream(seed, 0x7963, thread)),
            seed,
            loaded: 0,
            done_ops: 0,
            inserted: 0,
            thread,
            threads,
            cfg,
        })
    }

    /// Key of record `i`: `user` and a hashed number, as YCSB's hashed inserts.
    pub fn key(i: u64) -> Vec<u8> {
        format!("user{:020}", mix(i ^ 0x5943_5342)).into_bytes()
    }

    fn value_seed(&self, i: u64, version: u64) -> u64 {
        stream(self.seed, i, version)
    }

    /// This thread's numbers in `from..end`: those `i % threads == thread`.
    fn own(&self, from: u64, end: u64) -> std::iter::StepBy<std::ops::Range<u64>> {
        let first = from + (self.thread + self.threads - from % self.threads) % self.threads;
        (first..end).step_by(self.threads as usize)
    }

    /// Records this thread may read: the loaded ones and its own inserts.
    fn live(&self) -> u64 {
        self.cfg.records + self.inserted
    }

    /// The record of this thread's `j`-th readable record.
    fn record(&self, j: u64) -> u64 {
        match j.checked_sub(self.cfg.records) {
            None => j,
            Some(own) => self.cfg.records + own * self.threads + self.thread,
        }
    }

    fn pick(&mut self) -> u64 {
        let j = if self.cfg.workload == "d" {
            // Latest: the newest records are the hottest.
            let back = self.zipf.next(&mut self.rng) % self.live();
            self.live() - 1 - back
        } else {
            self.zipf.next_scrambled(&mut self.rng) % self.live()
        };
        self.record(j)
    }
}

impl Refill for Ycsb {
    fn header(&self) -> &Header {
        &self.header
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((
            self.loaded + self.done_ops,
            self.cfg.records + self.cfg.operations,
        ))
    }

    /// Long because one branch per phase of YCSB (the load, then the operation mix), sharing the generator's cursors.
    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        let len = self.cfg.value_bytes;
        if self.loaded < self.cfg.records {
            // About `load_batch` of this thread's records per commit.
            let span = self.cfg.load_batch.saturating_mul(self.threads);
            let end = (self.loaded + span).min(self.cfg.records);
            for i in self.own(self.loaded, end) {
                out.push(OwnedOp::PutGenerated(
                    0,
                    Self::key(i),
                    len,
                    self.value_seed(i, 0),
                ));
            }
            out.push(OwnedOp::Commit(false));
            self.loaded = end;
            if end == self.cfg.records {
                out.push(OwnedOp::Flush(None));
                out.push(OwnedOp::Mark("load".into()));
            }
            return Ok(true);
        }
        if self.done_ops >= self.cfg.operations {
            return Ok(false);
        }
        let end = (self.done_ops + self.cfg.ops_per_segment).min(self.cfg.operations);
        // Workload C never updates, so its reads check every byte; in the
        // others a read may see any version, so presence is what is checked.
        let exact = self.cfg.workload == "c";
        // This thread's share of the segment; `op` numbers versions globally.
        for op in self.own(self.done_ops, end) {
            let u = self.rng.f64();
            let mut acc = 0.0;
            let kind = self
                .mix
                .iter()
                .position(|p| {
                    acc += p;
                    u < acc
                })
                .unwrap_or(0);
            match kind {
                0 => {
                    let i = self.pick();
                    let expect = if exact {
                        Expect::Generated {
                            len,
                            seed: self.value_seed(i, 0),
                        }
                    } else {
                        Expect::Present
                    };
                    out.push(OwnedOp::Get(0, Self::key(i), expect));
                }
                1 => {
                    let i = self.pick();
                    out.push(OwnedOp::PutGenerated(
                        0,
                        Self::key(i),
                        len,
                        self.value_seed(i, op + 1),
                    ));
                    out.push(OwnedOp::Commit(false));
                }
                2 => {
                    let i = self.record(self.live());
                    self.inserted += 1;
                    out.push(OwnedOp::PutGenerated(
                        0,
                        Self::key(i),
                        len,
                        self.value_seed(i, 0),
                    ));
                    out.push(OwnedOp::Commit(false));
                }
                3 => {
                    let i = self.pick();
                    let n = 1 + self.rng.below(u64::from(self.cfg.scan_max)) as u32;
                    out.push(OwnedOp::Scan(0, Self::key(i), Vec::new(), n));
                }
                _ => {
                    let i = self.pick();
                    out.push(OwnedOp::Get(0, Self::key(i), Expect::Present));
                    out.push(OwnedOp::PutGenerated(
                        0,
                        Self::key(i),
                        len,
                        self.value_seed(i, op + 1),
                    ));
                    out.push(OwnedOp::Commit(false));
                }
            }
        }
        self.done_ops = end;
        out.push(OwnedOp::Mark(format!("ops {end}")));
        Ok(true)
    }
}
