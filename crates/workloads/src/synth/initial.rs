//! The initial state of a synthesized run: loaded before the `load` mark,
//! loaded alone, or given (a copy of another run's stores).

use ledgerbench_trace::queue::OwnedOp;
use serde::{Deserialize, Serialize};

use super::Synth;

/// Keys loaded per commit of the initial state.
const LOAD_BATCH: u64 = 1000;

/// The initial state's part in a run (`--param initial=...`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Initial {
    /// Loaded, then the `load` mark, then the timed operations.
    #[default]
    Play,
    /// Loaded and marked, and nothing after: the state a later run is
    /// given (`run synth --state-cache` keeps a copy of the stores).
    Only,
    /// Already in the stores (a copy of an `only` run's): nothing is
    /// loaded and no `load` mark made; the stream goes on from the state
    /// exactly as after a load (its choices drawn alike).
    Given,
}

impl Synth {
    /// The next thousand keys of the initial state, store after store, a
    /// commit each; the `load` mark after the last. False when loaded.
    pub(super) fn load(&mut self, out: &mut Vec<OwnedOp>) -> bool {
        // One thread loads; the others' keys are the state it loads.
        if self.timed.as_ref().is_some_and(|t| !t.role.loads) {
            for st in &mut self.stores {
                st.written = st.initial;
            }
        }
        let Some(s) =
            (0..self.stores.len()).find(|&s| self.stores[s].written < self.stores[s].initial)
        else {
            if self.loaded {
                return false;
            }
            self.loaded = true;
            // A given state was loaded by another run: no segment of its own.
            if self.initial == Initial::Given {
                return false;
            }
            out.push(OwnedOp::Mark("load".into()));
            return true;
        };
        let from = self.stores[s].written;
        if self.initial == Initial::Given {
            // The stores hold it: only the draws a load makes, so every
            // choice after it is the one a played load leads to.
            for _ in from..self.stores[s].initial {
                self.stores[s].value_size.draw(&mut self.rng, 0);
            }
            self.stores[s].written = self.stores[s].initial;
            return self.load(out);
        }
        let to = (from + LOAD_BATCH).min(self.stores[s].initial);
        for i in from..to {
            self.put(s, i, out);
        }
        self.stores[s].written = to;
        out.push(OwnedOp::Commit(false));
        true
    }
}
