//! A chain's account state: 20-byte addresses to nonce and balance; blocks
//! of transactions that create accounts, read them, or read-modify-write
//! them, each block one atomic commit.

use ledgerbench_rng::{Rng, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};
use serde::{Deserialize, Serialize};

use crate::generated::GenError;

/// Settings of an account-state run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccountConfig {
    /// Accounts created before the run.
    pub accounts: u64,
    /// Operations in the run.
    pub operations: u64,
    /// Share of creates, reads and read-modify-writes (normalised).
    pub mix: [f64; 3],
    /// Operations per block (one commit).
    pub ops_per_block: u32,
    /// Blocks per segment (a mark each).
    pub blocks_per_segment: u32,
    /// Bytes per account value (nonce u64, balance u128, padding).
    pub value_bytes: u32,
}

impl Default for AccountConfig {
    fn default() -> Self {
        Self {
            accounts: 1_000_000,
            operations: 2_000_000,
            mix: [0.1, 0.45, 0.45],
            ops_per_block: 1000,
            blocks_per_segment: 100,
            value_bytes: 32,
        }
    }
}

/// The account-state generator.
pub struct Accounts {
    cfg: AccountConfig,
    /// This stream's worker number and the number of workers: it owns the
    /// accounts `i` with `i % workers == worker` and a share of the operations.
    worker: u64,
    workers: u64,
    header: Header,
    seed: u64,
    created: u64,
    loaded: u64,
    done: u64,
    rng: Rng,
    mix: [f64; 3],
}

impl Accounts {
    /// A generator for one worker.
    pub fn new(seed: u64, cfg: AccountConfig) -> Result<Self, GenError> {
        Self::partition(seed, cfg, 0, 1)
    }

    /// Worker `worker` of `workers` running at once on the same store: each
    /// owns a disjoint share of the accounts and of the operations, so the
    /// streams never read each other's uncommitted accounts.
    pub fn partition(
        seed: u64,
        cfg: AccountConfig,
        worker: u64,
        workers: u64,
    ) -> Result<Self, GenError> {
        if workers == 0 || worker >= workers {
            return Err(GenError::config(
                "accounts",
                format!("worker {worker} of {workers}"),
            ));
        }
        let total: f64 = cfg.mix.iter().sum();
        if cfg.mix.iter().any(|p| *p < 0.0) || total <= 0.0 {
            return Err(GenError::config(
                "accounts",
                "mix must be three non-negative shares, not all zero",
            ));
        }
        if cfg.ops_per_block == 0 || cfg.blocks_per_segment == 0 || cfg.value_bytes < 24 {
            return Err(GenError::config(
                "accounts",
                "ops_per_block and blocks_per_segment >= 1, value_bytes >= 24",
            ));
        }
        if cfg.accounts == 0 && cfg.mix[0] == 0.0 {
            return Err(GenError::config(
                "accounts",
                "no accounts and no creates leaves nothing to read",
            ));
        }
        // This worker's share: accounts i = j * workers + worker.
        let share = |n: u64| n / workers + u64::from(worker < n % workers);
        let mut cfg = cfg;
        let all = cfg.clone();
        cfg.accounts = share(all.accounts);
        cfg.operations = share(all.operations);
        Ok(Self {
            header: crate::generated::header("accounts", seed, &["accounts"], &all),
            mix: cfg.mix.map(|p| p / total),
            created: cfg.accounts,
            worker,
            workers,
            seed,
            loaded: 0,
            done: 0,
            rng: Rng::new(stream(seed, 0x6163, worker)),
            cfg,
        })
    }

    /// Global number of this worker's `j`-th account.
    fn global(&self, j: u64) -> u64 {
        j * self.workers + self.worker
    }

    /// Address of account `i`.
    pub fn key(seed: u64, i: u64) -> Vec<u8> {
        let mut k = Vec::with_capacity(20);
        Rng::new(stream(seed, 0x6164, i)).fill(&mut k, 20);
        k
    }
}

impl Refill for Accounts {
    fn header(&self) -> &Header {
        &self.header
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((
            self.loaded + self.done,
            self.cfg.accounts + self.cfg.operations,
        ))
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        let len = self.cfg.value_bytes;
        if self.loaded < self.cfg.accounts {
            let end = (self.loaded + 10_000).min(self.cfg.accounts);
            for j in self.loaded..end {
                let i = self.global(j);
                out.push(OwnedOp::PutGenerated(
                    0,
                    Self::key(self.seed, i),
                    len,
                    stream(self.seed, i, 0),
                ));
            }
            out.push(OwnedOp::Commit(false));
            self.loaded = end;
            if end == self.cfg.accounts {
                out.push(OwnedOp::Flush(None));
                out.push(OwnedOp::Mark("genesis".into()));
            }
            return Ok(true);
        }
        if self.done >= self.cfg.operations {
            return Ok(false);
        }
        let per_seg = u64::from(self.cfg.ops_per_block) * u64::from(self.cfg.blocks_per_segment);
        let end = (self.done + per_seg).min(self.cfg.operations);
        let block = u64::from(self.cfg.ops_per_block);
        // Accounts created in the current block are not committed yet, so
        // reads pick among those that existed when the block began.
        let mut committed = self.created;
        for op in self.done..end {
            if op.is_multiple_of(block) {
                committed = self.created;
            }
            let u = self.rng.f64();
            if u < self.mix[0] || committed == 0 {
                let i = self.global(self.created);
                self.created += 1;
                out.push(OwnedOp::PutGenerated(
                    0,
                    Self::key(self.seed, i),
                    len,
                    stream(self.seed, i, 0),
                ));
            } else {
                let j = self.rng.below(committed);
                let i = self.global(j);
                out.push(OwnedOp::Get(0, Self::key(self.seed, i), Expect::Present));
                if u >= self.mix[0] + self.mix[1] {
                    out.push(OwnedOp::PutGenerated(
                        0,
                        Self::key(self.seed, i),
                        len,
                        stream(self.seed, i, op + 1),
                    ));
                }
            }
            if (op + 1).is_multiple_of(block) || op + 1 == end {
                out.push(OwnedOp::Commit(false));
            }
        }
        self.done = end;
        out.push(OwnedOp::Mark(format!("ops {end}")));
        Ok(true)
    }
}
