//! SIGTERM (systemd stopping the unit, e.g. on reboot): set a flag the stages check
//! between steps and while waiting, so the step in hand is finished or rolled back,
//! progress is journaled, and the process exits promptly.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

/// Set once SIGTERM or SIGINT has arrived.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: nix::libc::c_int) {
    // Only an atomic store: the one thing that is safe in a signal handler.
    STOP.store(true, Ordering::SeqCst);
}

/// Routes SIGTERM and SIGINT to [`STOP`] for the rest of the process's life.
pub(crate) fn install() -> nix::Result<&'static AtomicBool> {
    // No SA_RESTART: a blocking poll or sleep returns early and sees the flag.
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGTERM, Signal::SIGINT] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(&STOP)
}
