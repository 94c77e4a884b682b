//! `run synth`: a workload model (`ledgerbench fit`'s, or written by hand)
//! played at any scale, deterministically from the seed, in constant
//! memory: every key is regenerated from its store and index, and a store
//! holds only counters (keys loaded, inserted, deleted).
//!
//! What it plays, per store: the initial state (`initial_keys` times the
//! scale, loaded before the `load` mark), then operations drawn by the
//! mix, stores by their share of operations, commits of the sizes the
//! model states. Inserts take the next index; deletes the oldest live key
//! (TTL-like: a trace's deletes at random are played oldest first);
//! overwrites, found gets and scans pick a live key by the access model;
//! missing gets a key no put ever made. Not played yet: read ages and
//! per-prefix insert order (the model keeps them), and range deletes
//! (played as deletes).

mod draw;
mod initial;
pub mod presets;
mod roles;
mod upkeep;

use ledgerbench_model::Workload;
use ledgerbench_model::model::Store;
use ledgerbench_rng::{Rng, stream};
use ledgerbench_trace::queue::{OwnedOp, Refill};
use ledgerbench_trace::{Expect, Header};
use serde::{Deserialize, Serialize};

use crate::generated::GenError;
use draw::{Dist, Picker};
pub use initial::Initial;
use roles::RoleThread;
use upkeep::Upkeep;

/// Settings of a synthesized run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthConfig {
    /// The workload model to play: a TOML file, or `preset:NAME` (one of
    /// [`presets::PRESETS`], in the binary).
    pub workload: String,
    /// Keys (the initial state and the key space) times the model's.
    pub scale: f64,
    /// Operations times the model's; unset: the same as `scale`.
    pub length: Option<f64>,
    /// Operations in all, instead of the model's times `length` (0: off).
    pub operations: u64,
    /// Operations per segment (where meters read); a model with roles
    /// has a segment per period instead.
    pub ops_per_segment: u64,
    /// Periods a model with roles plays (0: its stores' operations times
    /// `length` over the roles' operations a period).
    pub periods: u64,
    /// What becomes of the initial state: played, played alone, or given.
    pub initial: Initial,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self {
            workload: String::new(),
            scale: 1.0,
            length: None,
            operations: 0,
            ops_per_segment: 10_000,
            periods: 0,
            initial: Initial::Play,
        }
    }
}

/// One store's generator state: counters only.
struct StoreGen {
    mix: [f64; 8],
    key_size: Dist,
    value_size: Dist,
    scan: Dist,
    picker: Picker,
    ascending: bool,
    initial: u64,
    /// Keys written so far (initial and inserted): indices `0..written`.
    written: u64,
    /// Keys deleted, oldest first: indices `0..deleted`.
    deleted: u64,
}

/// The synthesized stream.
pub struct Synth {
    header: Header,
    seed: u64,
    stores: Vec<StoreGen>,
    /// Cumulative shares of operations by store.
    store_cum: Vec<f64>,
    commit: Option<Dist>,
    total: u64,
    done: u64,
    loaded: bool,
    pending: u64,
    target: u64,
    rng: Rng,
    per_segment: u64,
    /// The role this thread plays, where the model has roles.
    timed: Option<Timed>,
    /// The application's flushes and compactions.
    upkeep: Upkeep,
    /// Whether the initial state is played, alone, or given.
    initial: Initial,
}

/// A role's thread paced by the model's period.
struct Timed {
    role: RoleThread,
    /// Microseconds a period.
    period: u64,
    /// Periods in all.
    periods: u64,
    /// The next period to play.
    next: u64,
}

/// The model `cfg` names, read and checked.
fn model_of(cfg: &SynthConfig) -> Result<Workload, GenError> {
    let bad = |m: String| GenError::config("synth", m);
    if cfg.workload.is_empty() {
        return Err(bad(
            "set workload to a model file (`ledgerbench fit` writes one; docs/src/fit.md)".into(),
        ));
    }
    if let Some(name) = cfg.workload.strip_prefix(presets::PREFIX) {
        let p = presets::by_name(name).ok_or_else(|| {
            bad(format!(
                "no preset `{name}`: the presets are {}",
                presets::names()
            ))
        })?;
        return ledgerbench_model::parse(&cfg.workload, p.text).map_err(|e| bad(e.to_string()));
    }
    let text = std::fs::read_to_string(&cfg.workload)
        .map_err(|e| bad(format!("reading {}: {e}", cfg.workload)))?;
    ledgerbench_model::parse(&cfg.workload, &text).map_err(|e| bad(e.to_string()))
}

/// Client threads a model's roles need (`None` without roles): `run synth`
/// runs that many unless `--threads` says otherwise.
pub fn role_threads(cfg: &SynthConfig) -> Result<Option<u64>, GenError> {
    let m = model_of(cfg)?;
    Ok((!m.roles.is_empty()).then(|| roles::threads(&m)))
}

impl Synth {
    /// A generator of `cfg.workload`'s model (read here; a file that is
    /// missing or wrong is refused saying why): one stream of the stores'
    /// mixes, or thread 0's role where the model has roles.
    pub fn new(seed: u64, cfg: SynthConfig) -> Result<Self, GenError> {
        let n = role_threads(&cfg)?.unwrap_or(1);
        Self::thread(seed, cfg, 0, n)
    }

    /// Thread `t` of `n`: its role's part where the model has roles, else
    /// the one stream (split between threads by key by the caller).
    pub fn thread(seed: u64, cfg: SynthConfig, t: u64, n: u64) -> Result<Self, GenError> {
        let bad = |m: String| GenError::config("synth", m);
        let model = model_of(&cfg)?;
        let length = cfg.length.unwrap_or(cfg.scale);
        for (what, v) in [("scale", cfg.scale), ("length", length)] {
            if !(v.is_finite() && v > 0.0 && v <= 1e6) {
                return Err(bad(format!(
                    "{what} = {v}: give a factor above 0 and at most 1,000,000"
                )));
            }
        }
        if cfg.ops_per_segment == 0 {
            return Err(bad("ops_per_segment must be at least 1".into()));
        }
        let ops: u64 = model.stores.iter().map(|s| s.operations).sum();
        let mut total = if cfg.operations > 0 {
            cfg.operations
        } else {
            (ops as f64 * length).round() as u64
        };
        let role = if model.roles.is_empty() {
            if total == 0 {
                return Err(bad("the model states no operations: set `operations` (per store in the file, or in all with --param operations=N)".into()));
            }
            None
        } else {
            let r = roles::of(&model, t, n)?;
            let per_period: u64 = model.roles.iter().map(|r| r.ops_per_period).sum();
            let periods = if cfg.periods > 0 {
                cfg.periods
            } else {
                total.div_ceil(per_period).max(1)
            };
            total = periods * r.share;
            Some(Timed {
                role: r,
                period: model.commits.period_micros.unwrap_or(1),
                periods,
                next: 0,
            })
        };
        let mut cum = 0.0;
        let store_cum = model
            .stores
            .iter()
            .map(|s| {
                cum += s.operations.max(1) as f64;
                cum
            })
            .collect();
        let stores = (0..)
            .zip(&model.stores)
            .map(|(i, s)| store(s, cfg.scale, stream(seed, 0x5e, i)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            header: header_of(seed, &cfg, &model),
            seed,
            stores,
            store_cum,
            commit: model.commits.writes.as_ref().map(Dist::quantiles),
            total,
            done: 0,
            loaded: false,
            pending: 0,
            target: 1,
            rng: Rng::new(stream(seed, 0x5f, t)),
            per_segment: cfg.ops_per_segment,
            timed: role,
            upkeep: Upkeep::of(&model.commits),
            initial: cfg.initial,
        })
    }
}

/// The stream's header: the stores' names, and the settings and model
/// the results record.
fn header_of(seed: u64, cfg: &SynthConfig, model: &Workload) -> Header {
    let names: Vec<&str> = model.stores.iter().map(|s| s.name.as_str()).collect();
    crate::generated::header("synth", seed, &names, &Source { config: cfg, model })
}

/// What the results record of a synthesized run: its settings and the
/// model whole, so a run is understood without the file.
#[derive(Serialize)]
struct Source<'a> {
    config: &'a SynthConfig,
    model: &'a Workload,
}

fn store(s: &Store, scale: f64, salt: u64) -> Result<StoreGen, GenError> {
    let shares = s.mix.shares();
    let mut mix = [0.0; 8];
    let mut total = 0.0;
    for (m, (_, v)) in mix.iter_mut().zip(shares) {
        total += v;
        *m = total;
    }
    let key_size = Dist::of(&s.key_size).unwrap_or(Dist::Fixed(16.0));
    let value_size = Dist::of(&s.value_size).unwrap_or(Dist::Fixed(100.0));
    let scan = s
        .scan_length
        .as_ref()
        .and_then(Dist::of)
        .unwrap_or(Dist::Fixed(10.0));
    if s.mix.scan > 0.0 && s.scan_length.is_none() {
        return Err(GenError::config(
            "synth",
            format!("store `{}` scans but states no scan_length", s.name),
        ));
    }
    Ok(StoreGen {
        mix,
        key_size,
        value_size,
        scan,
        picker: Picker::new(&s.access, scale, salt),
        ascending: s.inserts.ascending >= 0.5,
        initial: (s.initial_keys as f64 * scale).round() as u64,
        written: 0,
        deleted: 0,
    })
}

impl Synth {
    /// Store `s`'s key at `index`: its size drawn from the index, its bytes
    /// the index in big-endian order (sequential stores) or drawn from it.
    fn key(&self, s: usize, index: u64) -> Vec<u8> {
        let st = &self.stores[s];
        let mut rng = Rng::new(stream(self.seed, s as u64 + 1, index));
        let len = st.key_size.draw(&mut rng, 1) as usize;
        let mut k = Vec::with_capacity(len.max(8));
        if st.ascending {
            let be = index.to_be_bytes();
            k.extend_from_slice(&be[8usize.saturating_sub(len)..]);
            if len > 8 {
                rng.fill(&mut k, len - 8);
            }
        } else {
            rng.fill(&mut k, len);
        }
        k
    }

    fn put(&mut self, s: usize, index: u64, out: &mut Vec<OwnedOp>) {
        let key = self.key(s, index);
        let len = self.stores[s].value_size.draw(&mut self.rng, 0) as u32;
        let seed = stream(stream(self.seed ^ 0x7661, s as u64, index), self.done, 0);
        out.push(OwnedOp::PutGenerated(s as u8, key, len, seed));
    }

    /// A store by its share of operations and a kind of operation by the
    /// mix (the role's, where it plays one), and whether the keys are the
    /// initial state's only (a role that reads while another writes).
    fn draw_op(&mut self) -> (usize, usize, bool) {
        if let Some(t) = &self.timed {
            let s = t.role.stores[roles::at(&t.role.store_cum, self.rng.f64())];
            let kind = roles::at(&t.role.mix, self.rng.f64()).min(7);
            return (s, kind, t.role.reads_initial);
        }
        let s = roles::at(&self.store_cum, self.rng.f64());
        let kind = roles::at(&self.stores[s].mix, self.rng.f64()).min(7);
        (s, kind, false)
    }

    /// One operation on a store drawn by its share.
    fn op(&mut self, out: &mut Vec<OwnedOp>) {
        let before = self.pending;
        let (s, kind, initial) = self.draw_op();
        let (lo, hi) = if initial {
            (0, self.stores[s].initial)
        } else {
            (self.stores[s].deleted, self.stores[s].written)
        };
        // Another thread may delete the initial state's keys: not checked.
        let found = if initial {
            Expect::Unchecked
        } else {
            Expect::Present
        };
        let live = hi > lo;
        let st = s as u8;
        match kind {
            // Overwrite of a live key.
            1 if live => {
                let i = self.stores[s].picker.pick(&mut self.rng, lo, hi);
                self.put(s, i, out);
                self.pending += 1;
            }
            // A delete (or a range delete) of the oldest live key.
            2 | 3 if live => {
                out.push(OwnedOp::Delete(st, self.key(s, lo)));
                self.stores[s].deleted += 1;
                self.pending += 1;
            }
            // A get that finds its key (an initial-state key's, too).
            4 | 6 if live => {
                let i = self.stores[s].picker.pick(&mut self.rng, lo, hi);
                out.push(OwnedOp::Get(st, self.key(s, i), found));
            }
            // A scan from a live key.
            7 if live => {
                let i = self.stores[s].picker.pick(&mut self.rng, lo, hi);
                let limit = self.stores[s].scan.draw(&mut self.rng, 1) as u32;
                out.push(OwnedOp::Scan(st, self.key(s, i), Vec::new(), limit));
            }
            // A get of a key no put made (the top half of the index space).
            4..=7 => {
                let i = (1 << 63) | self.rng.next_u64();
                out.push(OwnedOp::Get(st, self.key(s, i), Expect::Absent));
            }
            // An insert (and what has no live key to act on).
            _ => {
                let i = self.stores[s].written;
                self.put(s, i, out);
                self.stores[s].written += 1;
                self.pending += 1;
            }
        }
        if self.pending > before {
            self.upkeep.wrote();
        }
        self.done += 1;
        // A block's writes are committed at its end, all together.
        let block = self.timed.as_ref().is_some_and(|t| t.role.block);
        // The target is at least 1, so a commit here has writes in it.
        if !block && self.pending >= self.target {
            self.commit_pending(out);
            self.target = self.commit.as_ref().map_or(1, |d| d.draw(&mut self.rng, 1));
        }
        // A block's upkeep waits for its commit at the period's end.
        if !block && self.upkeep.due() {
            self.commit_pending(out);
            self.upkeep.take(out);
        }
    }

    /// Commits the writes not yet committed, if any.
    fn commit_pending(&mut self, out: &mut Vec<OwnedOp>) {
        if self.pending > 0 {
            out.push(OwnedOp::Commit(false));
            self.pending = 0;
        }
    }
}

impl Synth {
    /// The next period of this thread's role: its share of the period's
    /// operations, each at its time (a block's all at the start), the
    /// writes committed, then the period's mark. False after the last.
    fn period(&mut self, out: &mut Vec<OwnedOp>) -> bool {
        let Some(t) = self.timed.as_mut() else {
            return false;
        };
        if t.next >= t.periods {
            return false;
        }
        let (p, period, share, block) = (t.next, t.period, t.role.share, t.role.block);
        t.next += 1;
        let start = p * period;
        for k in 0..share {
            if !block || k == 0 {
                out.push(OwnedOp::At(start + k * period / share));
            }
            self.op(out);
        }
        self.commit_pending(out);
        self.upkeep.take(out);
        out.push(OwnedOp::Mark(format!("period {p}")));
        true
    }
}

impl Refill for Synth {
    fn header(&self) -> &Header {
        &self.header
    }

    fn progress(&self) -> Option<(u64, u64)> {
        Some((self.done, self.total))
    }

    fn refill(&mut self, out: &mut Vec<OwnedOp>) -> Result<bool, ledgerbench_trace::SourceError> {
        if self.load(out) {
            return Ok(true);
        }
        if self.initial == Initial::Only {
            return Ok(false);
        }
        if self.timed.is_some() {
            return Ok(self.period(out));
        }
        if self.done >= self.total {
            return Ok(false);
        }
        let end = (self.done + self.per_segment).min(self.total);
        while self.done < end {
            self.op(out);
        }
        if self.pending > 0 || self.done >= self.total {
            out.push(OwnedOp::Commit(false));
            self.pending = 0;
        }
        out.push(OwnedOp::Mark(format!("ops {}", self.done)));
        Ok(true)
    }
}
