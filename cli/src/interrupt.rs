//! Ctrl-C during a run: the first one asks the run to stop at the next slice and write the
//! results it reached; a second one ends the program at once (exit 130, as a shell does).

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Routes Ctrl-C (SIGINT) to [`requested`] from now on. Elsewhere than Unix, Ctrl-C keeps
/// its default: the program ends at once.
pub(crate) fn install() {
    #[cfg(unix)]
    {
        let handler: extern "C" fn(libc::c_int) = on_sigint;
        // SAFETY: the handler only touches an atomic and calls `_exit`, both
        // async-signal-safe; installing it races with nothing (one thread, at start).
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        }
    }
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    if REQUESTED.swap(true, Ordering::SeqCst) {
        // SAFETY: `_exit` is async-signal-safe; the user asked twice.
        unsafe { libc::_exit(130) };
    }
}

/// True once the user pressed Ctrl-C.
pub(crate) fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
