//! Events of a long run, for whatever saves or shows them: the JSONL files
//! that survive a crash and the progress display both implement
//! [`Observer`], and a run feeds them through one [`Fanout`]. Saving and
//! showing stay apart, so a run on a terminal saves exactly what a run in
//! CI saves.

use ledgerbench_results::{BatchRecord, SegmentRecord};

/// Receives a run's events as they happen. Every method has a no-op
/// default, so an observer implements only what it uses.
pub trait Observer {
    /// A Stellar batch finished (`total_batches` in the run).
    fn batch_done(&mut self, _rec: &BatchRecord, _total_batches: u32) {}
    /// An operation-stream segment finished; `progress` is the source's
    /// work done and in all, when it knows its end.
    fn segment_done(&mut self, _rec: &SegmentRecord, _progress: Option<(u64, u64)>) {}
    /// A phase started (`load`, `verify`, `streaming`, ...).
    fn phase(&mut self, _name: &str) {}
    /// Units of the current phase done, of `total`.
    fn advanced(&mut self, _done: u64, _total: u64) {}
    /// Why the run must stop now, if it must: asked after each segment of
    /// a soak (its guards watch the disk and memory).
    fn stop(&self) -> Option<String> {
        None
    }
}

impl Observer for () {}

/// Feeds every event to each observer, in order.
pub struct Fanout<'a>(pub Vec<&'a mut dyn Observer>);

impl Observer for Fanout<'_> {
    fn batch_done(&mut self, rec: &BatchRecord, total_batches: u32) {
        for o in &mut self.0 {
            o.batch_done(rec, total_batches);
        }
    }
    fn segment_done(&mut self, rec: &SegmentRecord, progress: Option<(u64, u64)>) {
        for o in &mut self.0 {
            o.segment_done(rec, progress);
        }
    }
    fn phase(&mut self, name: &str) {
        for o in &mut self.0 {
            o.phase(name);
        }
    }
    fn advanced(&mut self, done: u64, total: u64) {
        for o in &mut self.0 {
            o.advanced(done, total);
        }
    }
    fn stop(&self) -> Option<String> {
        self.0.iter().find_map(|o| o.stop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Count(Vec<String>);
    impl Observer for Count {
        fn phase(&mut self, name: &str) {
            self.0.push(name.to_string());
        }
        fn advanced(&mut self, done: u64, total: u64) {
            self.0.push(format!("{done}/{total}"));
        }
    }

    #[test]
    fn fanout_feeds_every_observer_in_order() {
        let (mut a, mut b) = (Count::default(), Count::default());
        let mut f = Fanout(vec![&mut a, &mut b]);
        f.phase("load");
        f.advanced(1, 2);
        assert_eq!(a.0, ["load", "1/2"]);
        assert_eq!(b.0, a.0);
    }
}
