//! The application's own upkeep a model states (`commits.flush_every_writes`,
//! `commits.compact_every_writes`): a flush of every store, a full manual
//! compaction, every so many writes, played as the traced application made
//! them. Stellar's node compacts after each batch, and a model without
//! that would time a different workload from the replay it was fitted from.

use ledgerbench_model::model::Commits;
use ledgerbench_trace::queue::OwnedOp;

/// Counts writes and says when an upkeep operation is due.
#[derive(Debug, Default)]
pub(super) struct Upkeep {
    flush_every: u64,
    compact_every: u64,
    writes: u64,
    flush_due: bool,
    compact_due: bool,
}

impl Upkeep {
    /// The model's upkeep (0 or unset: none).
    pub(super) fn of(c: &Commits) -> Self {
        Self {
            flush_every: c.flush_every_writes.unwrap_or(0),
            compact_every: c.compact_every_writes.unwrap_or(0),
            ..Self::default()
        }
    }

    /// Counts one write.
    pub(super) fn wrote(&mut self) {
        self.writes += 1;
        self.flush_due |= self.flush_every > 0 && self.writes.is_multiple_of(self.flush_every);
        self.compact_due |=
            self.compact_every > 0 && self.writes.is_multiple_of(self.compact_every);
    }

    /// Whether a flush or compaction is due (the writes before it committed first).
    pub(super) fn due(&self) -> bool {
        self.flush_due || self.compact_due
    }

    /// Appends what is due, a flush before a compaction, and clears it.
    pub(super) fn take(&mut self, out: &mut Vec<OwnedOp>) {
        if std::mem::take(&mut self.flush_due) {
            out.push(OwnedOp::Flush(None));
        }
        if std::mem::take(&mut self.compact_due) {
            out.push(OwnedOp::Compact(None));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_and_compacts_at_their_write_counts() {
        let mut u = Upkeep::of(&Commits {
            flush_every_writes: Some(2),
            compact_every_writes: Some(4),
            ..Commits::default()
        });
        let mut out = Vec::new();
        let mut at = Vec::new();
        for w in 1..=8 {
            u.wrote();
            if u.due() {
                u.take(&mut out);
                at.push((w, out.len()));
            }
        }
        // Flushes after writes 2, 4, 6, 8; compactions after 4 and 8.
        assert_eq!(at, vec![(2, 1), (4, 3), (6, 4), (8, 6)]);
        assert!(matches!(out[1], OwnedOp::Flush(None)));
        assert!(matches!(out[2], OwnedOp::Compact(None)));
        assert!(!u.due());
    }

    #[test]
    fn a_model_without_upkeep_never_asks() {
        let mut u = Upkeep::of(&Commits::default());
        (0..1000).for_each(|_| u.wrote());
        assert!(!u.due());
    }
}
