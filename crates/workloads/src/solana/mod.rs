//! A Solana blockstore: data and coding shreds keyed by (slot, index), big
//! endian, in stores of their own beside the slots' metadata. Shreds of the
//! newest `in_flight` slots arrive interleaved (as turbine and repair
//! deliver them, each slot's in a seeded shuffle), a `repair_fraction` of
//! them late, after the slot was otherwise complete; every insert reads and
//! rewrites its slot's metadata. Retention removes whole slots behind the
//! root: per key, by range deletes, or not at all (a FIFO size cap expires
//! them).

use std::collections::VecDeque;

use ledgerbench_rng::{Rng, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};

use crate::generated::GenError;

mod config;
pub use config::{Retention, SolanaConfig, resolve};

const DATA: u8 = 0;
const CODE: u8 = 1;
const META: u8 = 2;

/// A slot whose shreds are arriving.
struct Active {
    slot: u64,
    /// Shred numbers in arrival order.
    order: Vec<u32>,
    /// Position in `order` of the next shred.
    next: usize,
    /// Positions deferred to repair (not checked when the slot completes).
    deferred: Vec<usize>,
}

/// A shred arriving late.
struct Repair {
    /// Slots admitted when it arrives.
    due: u64,
    slot: u64,
    /// Its position in the slot's order.
    pos: usize,
    shred: u32,
}

/// The Solana blockstore generator.
pub struct Solana {
    cfg: SolanaConfig,
    header: Header,
    seed: u64,
    /// Next slot to admit.
    next_slot: u64,
    /// Slots completed (every shred but repairs written).
    done: u64,
    /// Highest slot completed, plus one.
    newest_done: u64,
    /// Slots below this are purged.
    purged: u64,
    active: VecDeque<Active>,
    /// Late shreds not yet arrived, in the order they arrive: a slot with
    /// one here is still open, whether or not its other shreds are in.
    repairs: VecDeque<Repair>,
    /// Shreds since the last commit.
    uncommitted: u32,
    /// Which active slot the next shred comes from, and whether it is late.
    pick: Rng,
    /// Checks held for after the next mark, with the slot each reads.
    later: Vec<(u64, OwnedOp)>,
}

/// Key of shred `index` of `slot`: slot then index, both big-endian.
pub fn shred_key(slot: u64, index: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    k.extend_from_slice(&slot.to_be_bytes());
    k.extend_from_slice(&index.to_be_bytes());
    k
}

impl Solana {
    /// A generator.
    pub fn new(seed: u64, cfg: SolanaConfig) -> Result<Self, GenError> {
        cfg.validate()?;
        Ok(Self {
            header: crate::generated::header(
                "solana",
                seed,
                &["data_shred", "code_shred", "slot_meta"],
                &cfg,
            ),
            seed,
            next_slot: 0,
            done: 0,
            newest_done: 0,
            purged: 0,
            active: VecDeque::new(),
            repairs: VecDeque::new(),
            uncommitted: 0,
            pick: Rng::new(stream(seed ^ 0x666c, 0, 0)),
            later: Vec::new(),
            cfg,
        })
    }

    fn shreds(&self) -> u32 {
        self.cfg.data_shreds + self.cfg.coding_shreds
    }

    fn shred(&self, slot: u64, i: u32) -> (u8, u64, u32, u64) {
        // (store, index, length, value seed)
        let (store, index, len) = if i < self.cfg.data_shreds {
            (DATA, u64::from(i), self.cfg.data_bytes)
        } else {
            (
                CODE,
                u64::from(i - self.cfg.data_shreds),
                self.cfg.coding_bytes,
            )
        };
        (store, index, len, stream(self.seed, slot, u64::from(i)))
    }

    /// Starts the next slot: its shreds in a seeded shuffle.
    fn admit(&mut self) {
        let slot = self.next_slot;
        let mut order: Vec<u32> = (0..self.shreds()).collect();
        let mut r = Rng::new(stream(self.seed ^ 0x736c, slot, 0));
        for i in (1..order.len()).rev() {
            order.swap(i, r.below(i as u64 + 1) as usize);
        }
        self.active.push_back(Active {
            slot,
            order,
            next: 0,
            deferred: Vec::new(),
        });
        self.next_slot += 1;
    }

    /// The insert of shred `shred` at position `pos` of `slot`: the
    /// metadata read, the shred, the metadata rewrite.
    fn insert(&self, slot: u64, pos: usize, shred: u32, out: &mut Vec<OwnedOp>) {
        let (store, index, len, seed) = self.shred(slot, shred);
        let meta_key = slot.to_be_bytes().to_vec();
        // Reads see the last commit, so they are not checked.
        out.push(OwnedOp::Get(META, meta_key.clone(), Expect::Unchecked));
        out.push(OwnedOp::PutGenerated(
            store,
            shred_key(slot, index),
            len,
            seed,
        ));
        out.push(OwnedOp::PutGenerated(
            META,
            meta_key,
            self.cfg.meta_bytes,
            stream(self.seed ^ 0x6d65, slot, pos as u64),
        ));
    }

    /// A read that checks what the stream wrote: now, or after the next
    /// mark when checks wait for one.
    fn check(&mut self, slot: u64, op: OwnedOp, out: &mut Vec<OwnedOp>) {
        if self.cfg.checks_after_mark {
            self.later.push((slot, op));
        } else {
            out.push(op);
        }
    }

    /// The checks held back, except read-backs of slots a purge may reach
    /// before them: another thread may purge during the coming segment up to
    /// `keep_slots` behind the newest slot it can complete.
    fn checks_held(&mut self, out: &mut Vec<OwnedOp>) {
        let reach = if self.cfg.retention == Retention::Fifo {
            self.purged
        } else {
            (self.done + self.cfg.slots_per_segment + u64::from(self.cfg.in_flight))
                .saturating_sub(self.cfg.keep_slots)
                .max(self.purged)
        };
        for (slot, op) in self.later.drain(..) {
            let gone = matches!(op, OwnedOp::Get(_, _, Expect::Generated { .. })) && slot < reach;
            if !gone {
                out.push(op);
            }
        }
    }

    fn commit(&mut self, out: &mut Vec<OwnedOp>) {
        out.push(OwnedOp::Commit(false));
        self.uncommitted = 0;
    }

    /// One shred from an active slot (picked by seed when several are in
    /// flight); a slot that runs out completes.
    fn step(&mut self, out: &mut Vec<OwnedOp>) {
        let at = if self.active.len() > 1 {
            self.pick.below(self.active.len() as u64) as usize
        } else {
            0
        };
        let late = self.cfg.repair_fraction > 0.0 && self.pick.f64() < self.cfg.repair_fraction;
        let a = &mut self.active[at];
        let (slot, pos, shred) = (a.slot, a.next, a.order[a.next]);
        a.next += 1;
        let finished = a.next == a.order.len();
        if late {
            a.deferred.push(pos);
            self.repairs.push_back(Repair {
                due: self.next_slot + self.cfg.repair_delay_slots,
                slot,
                pos,
                shred,
            });
        } else {
            self.insert(slot, pos, shred, out);
            self.uncommitted += 1;
        }
        if self.uncommitted == self.cfg.shreds_per_commit || (finished && self.uncommitted > 0) {
            self.commit(out);
        }
        if finished {
            let a = self
                .active
                .remove(at)
                .expect("picked from the active slots");
            self.complete(a, out);
        }
    }

    /// A slot whose shreds all arrived but repairs: some read back, then
    /// what falls behind the root goes.
    fn complete(&mut self, a: Active, out: &mut Vec<OwnedOp>) {
        let n = a.order.len();
        for v in 0..self.cfg.verify_per_slot.min(n as u32) {
            let pos = (v as usize * 7919) % n;
            if a.deferred.contains(&pos) {
                continue;
            }
            let (store, index, len, seed) = self.shred(a.slot, a.order[pos]);
            let get = OwnedOp::Get(
                store,
                shred_key(a.slot, index),
                Expect::Generated { len, seed },
            );
            self.check(a.slot, get, out);
        }
        self.done += 1;
        self.newest_done = self.newest_done.max(a.slot + 1);
        self.purge(out);
    }

    /// Late shreds whose time has come, each its own insert and commit.
    fn repair(&mut self, out: &mut Vec<OwnedOp>) {
        while self
            .repairs
            .front()
            .is_some_and(|r| r.due <= self.next_slot)
        {
            let r = self.repairs.pop_front().expect("checked");
            self.insert(r.slot, r.pos, r.shred, out);
            self.commit(out);
        }
    }

    /// Removes the slots behind the root: `keep_slots` behind the newest
    /// complete slot, and never a slot still arriving or being repaired.
    fn purge(&mut self, out: &mut Vec<OwnedOp>) {
        if self.cfg.retention == Retention::Fifo {
            return;
        }
        let lowest_open = self
            .active
            .iter()
            .map(|a| a.slot)
            .chain(self.repairs.iter().map(|r| r.slot))
            .min()
            .unwrap_or(self.next_slot);
        let root = self
            .newest_done
            .saturating_sub(self.cfg.keep_slots)
            .min(lowest_open);
        match self.cfg.retention {
            Retention::Delete => {
                while self.purged < root {
                    let old = self.purged;
                    for i in 0..self.shreds() {
                        let (store, index, _, _) = self.shred(old, i);
                        out.push(OwnedOp::Delete(store, shred_key(old, index)));
                    }
                    out.push(OwnedOp::Delete(META, old.to_be_bytes().to_vec()));
                    self.commit(out);
                    let get = OwnedOp::Get(DATA, shred_key(old, 0), Expect::Absent);
                    self.check(old, get, out);
                    self.purged += 1;
                }
            }
            // Unresolved, auto purges by range (see `Retention::Auto`).
            Retention::Range | Retention::Auto if root >= self.purged + self.cfg.purge_every => {
                let (from, to) = (self.purged, root);
                for store in [DATA, CODE] {
                    out.push(OwnedOp::DeleteRange(
                        store,
                        shred_key(from, 0),
                        shred_key(to, 0),
                    ));
                }
                out.push(OwnedOp::DeleteRange(
                    META,
                    from.to_be_bytes().to_vec(),
                    to.to_be_bytes().to_vec(),
                ));
                self.commit(out);
                // The range's first key: with one thread the check follows
                // the purge's commit group on the same thread.
                let get = OwnedOp::Get(DATA, shred_key(from, 0), Expect::Absent);
                self.check(from, get, out);
                self.purged = to;
            }
            Retention::Range | Retention::Auto | Retention::Fifo => {}
        }
    }
}

impl Refill for Solana {
    fn header(&self) -> &Header {
        &self.header
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((self.done, self.cfg.slots))
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        // After the previous mark: every thread's writes before it landed.
        self.checks_held(out);
        let all_done = self.done >= self.cfg.slots && self.repairs.is_empty();
        if all_done {
            return Ok(!out.is_empty());
        }
        let end = (self.done + self.cfg.slots_per_segment).min(self.cfg.slots);
        while self.done < end || (end == self.cfg.slots && !self.repairs.is_empty()) {
            while self.active.len() < self.cfg.in_flight as usize && self.next_slot < self.cfg.slots
            {
                self.admit();
                self.repair(out);
            }
            if self.active.is_empty() {
                // Only repairs are left: they arrive now.
                for r in &mut self.repairs {
                    r.due = self.next_slot;
                }
                self.repair(out);
                self.purge(out);
                break;
            }
            self.step(out);
        }
        out.push(OwnedOp::Flush(None));
        out.push(OwnedOp::Mark(format!("slot {end}")));
        Ok(true)
    }
}
