//! Synthetic Stellar ledger ingestion: the three stores of a history archive
//! reader, as the RocksDB ingestion report laid them out.
//!
//! - `ledgers`: 4-byte big-endian sequence -> zstd(ledger close meta)
//! - `txdata`: 32-byte transaction hash -> zstd(transaction record)
//! - `txindex`: transaction hash -> 4-byte big-endian sequence
//!
//! Records are built from XDR-like fields so that zstd finds what it finds
//! in real ledgers: zero high bytes of small integers, account IDs that recur
//! across transactions (so whole ledgers compress better than transactions
//! one by one), before/after copies of ledger entries inside a record, and
//! hashes and signatures that do not compress at all.

use serde::{Deserialize, Serialize};

use ledgerbench_rng::{Rng, stream};

/// Names of the three stores, in write order.
pub const STORES: [&str; 3] = ["ledgers", "txdata", "txindex"];

const TAG_COUNT: u64 = 1;
const TAG_HASH: u64 = 2;
const TAG_RECORD: u64 = 3;
const TAG_HEADER: u64 = 4;
const TAG_ACCOUNT: u64 = 5;

// Field mix of a record (cumulative pick probabilities), calibrated so zstd
// level 3 lands on the report's ratios; see tests/calibration.rs.
const P_RANDOM: f64 = 0.002;
const P_ACCOUNT: f64 = 0.07;
const P_ENTRY: f64 = 0.20;
const P_COPY: f64 = 0.75;
const TAG_ENTRY: u64 = 6;
const FEE_CHANGES_LEN: usize = 36 + 2 * (4 + 8 + 112) + 36;

/// Shape of the synthetic pubnet. Defaults are fitted to the real data
/// described in `fixtures/stellar-pubnet/README.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StellarProfile {
    /// Transactions per ledger at quantiles 0, 10, 50, 90 and 100 % (pubnet,
    /// Aug 2024: 71, 203, 270, 586, 917); sampled by linear interpolation.
    pub tx_per_ledger_quantiles: [f64; 5],
    /// Mean the quantile curve is scaled to (the report's Oct 2025 month: 258).
    pub tx_per_ledger_mean: f64,
    /// Median raw transaction record, bytes (envelope + result + meta + seq, time, index).
    pub tx_record_median_bytes: f64,
    /// Log-normal sigma of record sizes: 0.6 puts p99 near 4x the median.
    pub tx_record_sigma: f64,
    /// Largest record, bytes (older pubnet metas reach 122 KB).
    pub tx_record_max_bytes: u32,
    /// Accounts transactions refer to.
    pub accounts: u64,
    /// Skew of account popularity: index = accounts x u^skew (1 = uniform).
    pub account_skew: f64,
    /// Ledger entries shared across transactions (offers, pools, hot accounts).
    pub shared_entries: u64,
    /// zstd level the application compresses ledgers and records with.
    pub zstd_level: i32,
    /// Simulated seconds between ledgers.
    pub close_interval_secs: u64,
    /// Sequence of the first ledger ingested.
    pub first_ledger: u32,
}

impl Default for StellarProfile {
    fn default() -> Self {
        Self {
            tx_per_ledger_quantiles: [71.0, 203.0, 270.0, 586.0, 917.0],
            tx_per_ledger_mean: 258.0,
            tx_record_median_bytes: 4260.0,
            tx_record_sigma: 0.6,
            tx_record_max_bytes: 120_000,
            accounts: 1_000,
            account_skew: 3.0,
            shared_entries: 300,
            zstd_level: 3,
            close_interval_secs: 5,
            first_ledger: 59_000_000,
        }
    }
}

/// A bad profile value.
#[derive(Debug, thiserror::Error)]
#[error("invalid stellar profile: {0}")]
pub struct ProfileError(String);

impl StellarProfile {
    /// Checks ranges, saying which value is wrong.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let q = self.tx_per_ledger_quantiles;
        // Written as "not within" so NaN, which compares false, is refused.
        if q.iter().any(|x| !(0.0..=100_000.0).contains(x)) || q.windows(2).any(|w| w[0] > w[1]) {
            return Err(ProfileError(format!(
                "tx_per_ledger_quantiles {q:?} must be non-decreasing numbers in [0, 100000]"
            )));
        }
        if !(0.0..=100_000.0).contains(&self.tx_per_ledger_mean) {
            return Err(ProfileError(
                "tx_per_ledger_mean must be in [0, 100000]".into(),
            ));
        }
        // A record is generated whole in memory: bounded so a typo cannot
        // ask the generator for gigabytes per transaction.
        if !(64.0..=1_048_576.0).contains(&self.tx_record_median_bytes)
            || !(128..=16 << 20).contains(&self.tx_record_max_bytes)
        {
            return Err(ProfileError(
                "tx_record_median_bytes must be in [64, 1048576] and tx_record_max_bytes in [128, 16777216]".into(),
            ));
        }
        if !(0.0..=3.0).contains(&self.tx_record_sigma) {
            return Err(ProfileError("tx_record_sigma must be in [0, 3]".into()));
        }
        if self.accounts == 0
            || self.shared_entries == 0
            || !(1.0..=1_000.0).contains(&self.account_skew)
        {
            return Err(ProfileError(
                "accounts and shared_entries must be > 0 and account_skew in [1, 1000]".into(),
            ));
        }
        if !(1..=22).contains(&self.zstd_level) {
            return Err(ProfileError(format!(
                "zstd_level {} must be in 1..=22",
                self.zstd_level
            )));
        }
        Ok(())
    }

    fn quantile_mean(&self) -> f64 {
        let q = self.tx_per_ledger_quantiles;
        let w = [0.1, 0.4, 0.4, 0.1];
        (0..4).map(|i| w[i] * (q[i] + q[i + 1]) / 2.0).sum()
    }
}

/// Generates any ledger, transaction hash or record from (seed, sequence, index).
#[derive(Debug, Clone)]
pub struct StellarGen {
    seed: u64,
    profile: StellarProfile,
    scale: f64,
}

/// One generated ledger, raw (before compression).
#[derive(Debug, Default)]
pub struct Ledger {
    /// Ledger sequence.
    pub seq: u32,
    /// Transaction hashes in apply order.
    pub tx_hashes: Vec<[u8; 32]>,
    /// Raw transaction records, one per hash.
    pub tx_records: Vec<Vec<u8>>,
    /// The raw ledger: header, then for each transaction `hash | len u32 | record | fee changes`.
    pub raw: Vec<u8>,
}

impl StellarGen {
    /// A generator; the profile must be valid.
    pub fn new(seed: u64, profile: StellarProfile) -> Result<Self, ProfileError> {
        profile.validate()?;
        let qm = profile.quantile_mean();
        let scale = if qm > 0.0 {
            profile.tx_per_ledger_mean / qm
        } else {
            0.0
        };
        Ok(Self {
            seed,
            profile,
            scale,
        })
    }

    /// The profile in use.
    pub fn profile(&self) -> &StellarProfile {
        &self.profile
    }

    /// The seed in use.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of transactions in ledger `seq`.
    pub fn tx_count(&self, seq: u32) -> u32 {
        let u = Rng::new(stream(self.seed, TAG_COUNT, u64::from(seq))).f64();
        let q = self.profile.tx_per_ledger_quantiles;
        let knots = [0.0, 0.1, 0.5, 0.9, 1.0];
        let i = knots.windows(2).position(|w| u < w[1]).unwrap_or(3);
        let t = (u - knots[i]) / (knots[i + 1] - knots[i]);
        ((q[i] + t * (q[i + 1] - q[i])) * self.scale).round() as u32
    }

    /// Hash of transaction `i` of ledger `seq`: uniformly random 32 bytes.
    pub fn tx_hash(&self, seq: u32, i: u32) -> [u8; 32] {
        let mut r = Rng::new(stream(self.seed ^ TAG_HASH, u64::from(seq), u64::from(i)));
        let mut h = [0u8; 32];
        for c in h.chunks_mut(8) {
            c.copy_from_slice(&r.next_u64().to_le_bytes());
        }
        h
    }

    /// Close time of ledger `seq`, seconds since the epoch.
    pub fn close_time(&self, seq: u32) -> u64 {
        1_727_740_800
            + u64::from(seq.saturating_sub(self.profile.first_ledger))
                * self.profile.close_interval_secs
    }

    fn account(&self, r: &mut Rng, out: &mut Vec<u8>) {
        let p = &self.profile;
        let idx = (p.accounts as f64 * r.f64().powf(p.account_skew)) as u64;
        let mut a = Rng::new(stream(self.seed ^ TAG_ACCOUNT, idx, 0));
        out.extend_from_slice(&[0, 0, 0, 0]); // key type: ed25519
        a.fill(out, 32);
    }

    /// A ledger entry many transactions touch (an order book offer, a pool,
    /// a popular account): the same bytes recur across the transactions of a
    /// ledger, which is why whole ledgers compress better than their
    /// transactions one by one.
    fn shared_entry(&self, r: &mut Rng, out: &mut Vec<u8>) {
        let p = &self.profile;
        let idx = (p.shared_entries as f64 * r.f64().powf(p.account_skew)) as u64;
        let mut e = Rng::new(stream(self.seed ^ TAG_ENTRY, idx, 0));
        let len = 64 + e.below(192) as usize;
        e.fill(out, len);
    }

    fn fee_changes(&self, r: &mut Rng, out: &mut Vec<u8>) {
        let start = out.len();
        self.account(r, out);
        let balance = r.below(1 << 40);
        for state in 0..2u64 {
            out.extend_from_slice(&(state as u32).to_be_bytes());
            out.extend_from_slice(&balance.wrapping_sub(state * 100).to_be_bytes());
            out.extend_from_slice(&[0u8; 112]);
        }
        out.extend_from_within(start..start + 36);
    }

    /// Appends the raw record of transaction `i` of ledger `seq` to `out`.
    pub fn tx_record(&self, seq: u32, i: u32, out: &mut Vec<u8>) {
        let p = &self.profile;
        let mut r = Rng::new(stream(self.seed ^ TAG_RECORD, u64::from(seq), u64::from(i)));
        let len = (p.tx_record_median_bytes * (p.tx_record_sigma * r.normal()).exp())
            .clamp(128.0, f64::from(p.tx_record_max_bytes)) as usize;
        let start = out.len();
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(&self.close_time(seq).to_be_bytes());
        out.extend_from_slice(&i.to_be_bytes());
        // Envelope: source account, fee, sequence number, signature.
        self.account(&mut r, out);
        out.extend_from_slice(&(100 + r.below(10_000) as u32).to_be_bytes());
        out.extend_from_slice(&r.next_u64().to_be_bytes()[..8]);
        r.fill(out, 64);
        while out.len() - start < len {
            let u = r.f64();
            let here = out.len() - start;
            if u < P_RANDOM {
                // Hashes and signatures: incompressible.
                r.fill(out, 32);
            } else if u < P_ACCOUNT {
                self.account(&mut r, out);
            } else if u < P_ENTRY {
                self.shared_entry(&mut r, out);
            } else if u < P_COPY && here > 256 {
                // A ledger entry's before/after copy: an earlier span again,
                // with a balance or sequence number changed.
                let span = (64 + r.below(448) as usize).min(here);
                let from = start + r.below((here - span + 1) as u64) as usize;
                let at = out.len();
                out.extend_from_within(from..from + span);
                let k = at + r.below(span as u64) as usize;
                out[k] = r.next_u64() as u8;
            } else {
                // XDR integers: mostly enum tags and small counts, some
                // amounts with zero high bytes.
                for _ in 0..(1 + r.below(6)) {
                    let v = r.below(100);
                    if v < 90 {
                        out.extend_from_slice(&(r.below(16) as u32).to_be_bytes());
                    } else if v < 98 {
                        out.extend_from_slice(&(r.below(1 << 16) as u32).to_be_bytes());
                    } else {
                        out.extend_from_slice(&r.below(1 << 40).to_be_bytes());
                    }
                }
            }
        }
        out.truncate(start + len.max(out.len() - start).min(len + 64));
    }

    /// Generates ledger `seq` whole, reusing `ledger`'s buffers.
    pub fn ledger_into(&self, seq: u32, ledger: &mut Ledger) {
        let n = self.tx_count(seq) as usize;
        ledger.seq = seq;
        ledger.tx_hashes.clear();
        ledger.tx_records.resize_with(n, Vec::new);
        ledger.raw.clear();
        let mut r = Rng::new(stream(self.seed ^ TAG_HEADER, u64::from(seq), 0));
        // Header: previous hash, tx-set hash, SCP value and upgrades.
        ledger.raw.extend_from_slice(&seq.to_be_bytes());
        ledger
            .raw
            .extend_from_slice(&self.close_time(seq).to_be_bytes());
        r.fill(&mut ledger.raw, 32 * 4 + 64 * 3);
        ledger.raw.extend_from_slice(&(n as u32).to_be_bytes());
        for i in 0..n {
            let h = self.tx_hash(seq, i as u32);
            let rec = &mut ledger.tx_records[i];
            rec.clear();
            self.tx_record(seq, i as u32, rec);
            ledger.raw.extend_from_slice(&h);
            ledger
                .raw
                .extend_from_slice(&(rec.len() as u32).to_be_bytes());
            ledger.raw.extend_from_slice(rec);
            ledger.tx_hashes.push(h);
            // Fee processing: the fee source's balance before and after.
            self.fee_changes(&mut r, &mut ledger.raw);
        }
    }

    /// Generates ledger `seq`.
    pub fn ledger(&self, seq: u32) -> Ledger {
        let mut l = Ledger::default();
        self.ledger_into(seq, &mut l);
        l
    }
}

/// Finds transaction `hash` in a raw ledger and returns its record: the
/// second step of a two-step lookup (`txindex` then `ledgers`).
pub fn find_tx<'a>(raw_ledger: &'a [u8], hash: &[u8; 32]) -> Option<&'a [u8]> {
    let header = 4 + 8 + 32 * 4 + 64 * 3;
    let n = u32::from_be_bytes(raw_ledger.get(header..header + 4)?.try_into().ok()?);
    let mut at = header + 4;
    for _ in 0..n {
        let h = raw_ledger.get(at..at + 32)?;
        let len = u32::from_be_bytes(raw_ledger.get(at + 32..at + 36)?.try_into().ok()?) as usize;
        let rec = raw_ledger.get(at + 36..at + 36 + len)?;
        if h == hash {
            return Some(rec);
        }
        at += 36 + len + FEE_CHANGES_LEN;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_() -> StellarGen {
        StellarGen::new(42, StellarProfile::default()).expect("valid")
    }

    #[test]
    fn regenerates_from_position_alone() {
        let g = gen_();
        let a = g.ledger(59_000_123);
        let b = g.ledger(59_000_123);
        assert_eq!(a.raw, b.raw);
        let mut rec = Vec::new();
        g.tx_record(59_000_123, 5, &mut rec);
        assert_eq!(rec, a.tx_records[5]);
        assert_eq!(g.tx_hash(59_000_123, 5), a.tx_hashes[5]);
        assert_ne!(g.ledger(59_000_124).raw, a.raw);
        let other = StellarGen::new(43, StellarProfile::default()).expect("valid");
        assert_ne!(other.tx_hash(59_000_123, 5), a.tx_hashes[5]);
    }

    #[test]
    fn two_step_lookup_finds_each_transaction() {
        let g = gen_();
        let l = g.ledger(59_000_007);
        assert!(!l.tx_hashes.is_empty());
        for (h, rec) in l.tx_hashes.iter().zip(&l.tx_records) {
            assert_eq!(find_tx(&l.raw, h), Some(&rec[..]));
        }
        assert_eq!(find_tx(&l.raw, &[7u8; 32]), None);
        assert_eq!(find_tx(&l.raw[..100], &l.tx_hashes[0]), None);
    }

    #[test]
    fn tx_per_ledger_follows_the_fitted_distribution() {
        let g = gen_();
        let mut counts: Vec<u32> = (0..20_000).map(|s| g.tx_count(59_000_000 + s)).collect();
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / counts.len() as f64;
        assert!((mean - 258.0).abs() < 4.0, "mean {mean}");
        counts.sort_unstable();
        let scale = 258.0 / StellarProfile::default().quantile_mean();
        let p50 = f64::from(counts[counts.len() / 2]);
        assert!((p50 - 270.0 * scale).abs() < 8.0, "p50 {p50}");
        assert!(f64::from(counts[0]) >= (71.0 * scale).floor());
        assert!(f64::from(*counts.last().expect("nonempty")) <= (917.0 * scale).ceil());
    }

    #[test]
    fn bad_profiles_are_refused_with_the_field_named() {
        let p = StellarProfile {
            zstd_level: 0,
            ..StellarProfile::default()
        };
        assert!(
            StellarGen::new(1, p)
                .expect_err("bad")
                .to_string()
                .contains("zstd_level")
        );
        let p = StellarProfile {
            tx_per_ledger_quantiles: [5.0, 4.0, 3.0, 2.0, 1.0],
            ..StellarProfile::default()
        };
        assert!(StellarGen::new(1, p).is_err());
    }
}
