//! Open-loop lookups: requests arrive on a schedule (fixed rate or Poisson)
//! whether or not earlier ones have returned, and each one's latency runs
//! from the moment it was due, so a stall counts against every request that
//! waited behind it (no coordinated omission).
//!
//! The schedule is a plain thread that sleeps with 1 us timer slack, not an
//! async runtime: tokio's timer wheel ticks in milliseconds, which would add
//! up to 1 ms of the harness's own delay to lookups whose median is tens of
//! microseconds. The engine calls run on a fixed pool of scoped threads
//! (the stores are borrowed for the phase, which `spawn_blocking` cannot
//! take). How late the schedule itself dispatched is measured and reported.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use crossbeam_channel::{TrySendError, bounded};
use hdrhistogram::Histogram;
use ledgerbench_rng::{Rng, stream};
use ledgerbench_workloads::stellar::StellarGen;

use super::lookups::Lookup;
use super::*;
use crate::DriverError;
use crate::results::{Latency, OpenLoopResult};
pub use crate::schedule::Arrival;
use crate::schedule::Schedule;
use crate::segment::{histogram, record};

/// Requests waiting for a lookup thread at most; past it a request is shed
/// (counted, never timed), so the harness's memory stays bounded when an
/// engine cannot keep up.
pub const QUEUE: usize = 65_536;

struct Request {
    due: Instant,
    two_step: bool,
    seq: u32,
    i: u32,
}

/// Latency histograms of one kind of lookup.
struct Pair {
    /// From when the request was due.
    corrected: Histogram<u64>,
    /// From when a lookup thread started it (the service time).
    uncorrected: Histogram<u64>,
}

impl Pair {
    fn new() -> Self {
        Self {
            corrected: histogram(),
            uncorrected: histogram(),
        }
    }

    fn add(&mut self, o: &Pair) {
        let _ = self.corrected.add(&o.corrected);
        let _ = self.uncorrected.add(&o.uncorrected);
    }
}

/// Lets this thread's sleeps end within a microsecond of their deadline
/// (the default slack is 50 us) and, where allowed (root), runs it ahead of
/// the lookup and writer threads, which would otherwise delay dispatch on a
/// machine with fewer cores than threads. Returns whether the priority was
/// raised.
fn sharpen_schedule_thread() -> bool {
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's
    // slack; setpriority on this thread's id only changes its own nice value.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0);
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, -15) == 0
    }
}

/// The open-loop schedule: how fast requests come and who serves them.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpenLoop {
    /// Requests per second.
    pub(super) rate: f64,
    /// Fixed or Poisson arrivals.
    pub(super) arrival: Arrival,
    /// Threads serving the requests.
    pub(super) workers: usize,
    /// First ledger of the history lookups pick from.
    pub(super) first: u32,
    /// Whether each answer can be checked against the generator.
    pub(super) checkable: bool,
    /// The p99 bound a rate is sustained under, microseconds.
    pub(super) p99_bound_us: Option<f64>,
}

/// Issues requests at `o.rate` per second until `done`, serving them on
/// `o.workers` threads; lookups alternate one-step and two-step. `last` is
/// the newest ledger written so far.
///
/// Long because one thread scope: the schedule thread and the workers borrow the scope's channel, totals and flags.
pub(super) fn run(
    gen_: &StellarGen,
    stores: Stores<'_>,
    o: OpenLoop,
    last: &AtomicU32,
    done: &AtomicBool,
) -> Result<OpenLoopResult, DriverError> {
    let OpenLoop {
        rate,
        arrival,
        workers,
        first,
        checkable,
        p99_bound_us,
    } = o;
    let (tx, rx) = bounded::<Request>(QUEUE);
    let totals = Mutex::new((Pair::new(), Pair::new(), 0u64, 0u64));
    let started = Instant::now();
    let (issued, shed, lateness, schedule_priority_raised) =
        std::thread::scope(|scope| -> Result<_, DriverError> {
            let mut pool = Vec::new();
            for _ in 0..workers {
                let rx = rx.clone();
                let totals = &totals;
                pool.push(scope.spawn(move || -> Result<(), DriverError> {
                    let mut l = Lookup::new(gen_, stores);
                    let (mut one, mut two, mut bad, mut n) = (Pair::new(), Pair::new(), 0u64, 0u64);
                    for req in rx.iter() {
                        let start = Instant::now();
                        let found = if req.two_step {
                            l.two_step(req.seq, req.i)?
                        } else {
                            l.one_step(req.seq, req.i)?
                        };
                        let end = Instant::now();
                        let h = if req.two_step { &mut two } else { &mut one };
                        record(&mut h.corrected, end.duration_since(req.due));
                        record(&mut h.uncorrected, end.duration_since(start));
                        n += 1;
                        if checkable && !(found && l.found_expected(req.seq, req.i)) {
                            bad += 1;
                        }
                    }
                    let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
                    t.0.add(&one);
                    t.1.add(&two);
                    t.2 += bad;
                    t.3 += n;
                    Ok(())
                }));
            }
            drop(rx);
            // The schedule runs on this thread.
            let raised = sharpen_schedule_thread();
            let mut sched =
                Schedule::new(rate, arrival, Rng::new(stream(gen_.seed(), 0x6f70_656e, 0)));
            let mut picks = Rng::new(stream(gen_.seed(), 0x6f70_656e, 1));
            let picker = Lookup::new(gen_, stores);
            let (mut issued, mut shed, mut late) = (0u64, 0u64, histogram());
            while !done.load(Ordering::Acquire) {
                let due = sched.wait();
                record(&mut late, Instant::now().duration_since(due));
                let Some((seq, i)) = picker.pick(&mut picks, first, last.load(Ordering::Acquire))
                else {
                    continue;
                };
                let req = Request {
                    due,
                    two_step: issued % 2 == 1,
                    seq,
                    i,
                };
                match tx.try_send(req) {
                    Ok(()) => issued += 1,
                    Err(TrySendError::Full(_)) => shed += 1,
                    Err(TrySendError::Disconnected(_)) => break,
                }
            }
            drop(tx);
            for w in pool {
                w.join()
                    .map_err(|_| DriverError::Generator("lookup thread panicked".into()))??;
            }
            Ok((issued, shed, late, raised))
        })?;
    let wall = started.elapsed().as_secs_f64();
    let (one, two, bad, completed) = totals.into_inner().unwrap_or_else(|e| e.into_inner());
    let one_c = Latency::from_histogram(&one.corrected);
    let two_c = Latency::from_histogram(&two.corrected);
    let sustained = p99_bound_us.map(|bound| {
        shed == 0
            && [&one_c, &two_c]
                .iter()
                .all(|l| l.as_ref().is_some_and(|l| l.p99_us <= bound))
    });
    Ok(OpenLoopResult {
        rate_per_sec: rate,
        arrival: arrival.name().into(),
        issued,
        completed,
        shed,
        achieved_per_sec: completed as f64 / wall.max(1e-9),
        one_step: one_c,
        one_step_uncorrected: Latency::from_histogram(&one.uncorrected),
        two_step: two_c,
        two_step_uncorrected: Latency::from_histogram(&two.uncorrected),
        dispatch_lateness: Latency::from_histogram(&lateness),
        schedule_priority_raised,
        mismatches: checkable.then_some(bad),
        p99_bound_us,
        sustained,
    })
}
