//! Ctrl-C and SIGTERM as a request to stop: long writers (recording a
//! trace, importing ledgers) check it between operations and end through
//! their error path, so their partial output is removed and they can say
//! so, instead of dying with half a file on disk.

use std::sync::atomic::{AtomicI32, Ordering};

static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::SeqCst);
}

/// Catches SIGINT and SIGTERM from now on (for commands that check
/// [`requested`]).
pub fn install() {
    // SAFETY: the handler only stores into an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// The signal that asked to stop, by name, once one arrived.
pub fn requested() -> Option<&'static str> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        libc::SIGINT => Some("SIGINT (Ctrl-C)"),
        libc::SIGTERM => Some("SIGTERM"),
        _ => Some("a signal"),
    }
}
