//! SIGTERM, SIGINT or SIGHUP while an ingest event is unacknowledged (docs/spec/hooks.md §2.7): spool it,
//! then exit 0 — the host killing a slow hook must not lose the event.
//!
//! `main` calls [`block_termination`] before anything else when the command is `memd hook`, so a
//! signal that arrives while the process still parses its arguments or reads stdin waits instead
//! of killing it. [`arm`] then starts a watcher thread that takes the signals synchronously with
//! `sigwait` (a signal already pending is taken at once). The spooling therefore runs
//! as ordinary code (allocation, redaction, fsync), never inside a signal handler. Whoever claims the
//! event first — the handler finishing normally or the watcher — spools it; the other does not, so
//! a signal during the handler's own spool write waits for it to finish instead of cutting it short.
//! Once the watcher has the event the process belongs to it: the handler, finishing meanwhile,
//! waits for the watcher's exit instead of exiting under a half-written spool file. Only ingest
//! deliveries arm the guard; read-only handlers give the signals back their default behaviour
//! ([`unblock_termination`]).

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::env::HookEnv;
use super::event::IngestEvent;
use super::spool_write::spool;

enum Slot {
    /// Unacknowledged: the watcher spools it on a signal.
    Pending(Box<IngestEvent>),
    /// The handler is finishing it (spool or reject write in progress).
    Claimed,
    /// The watcher took it and is spooling it; it exits the process when done.
    Watcher,
    /// Acknowledged or written: a signal just exits.
    Done,
}

/// The armed guard of one delivery.
pub struct Guard {
    shared: Arc<(Mutex<Slot>, Condvar)>,
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a zeroed, owned sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread — called first thing in `main` for
/// `memd hook`, while the process has one thread, so every thread inherits the mask.
pub fn block_termination() {
    let set = signal_set();
    // SAFETY: pthread_sigmask on the calling thread with a valid set and no old-set output.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// Gives the three signals back their default behaviour (read-only handlers have nothing to save).
pub fn unblock_termination() {
    let set = signal_set();
    // SAFETY: as in `block_termination`.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
}

/// The watcher owns the process: wait for its exit.
fn wait_for_exit() -> ! {
    loop {
        std::thread::park();
    }
}

/// Arms the guard for `event` (a copy is kept until [`Guard::claim`] or [`Guard::done`]). When the
/// signals cannot be taken over, the guard stays inert and the default behaviour applies.
pub fn arm(hook: &HookEnv<'_>, event: &IngestEvent) -> Guard {
    let shared = Arc::new((Mutex::new(Slot::Pending(Box::new(event.clone()))), Condvar::new()));
    let set = signal_set();
    // SAFETY: pthread_sigmask on the calling thread with a valid set and no old-set output.
    let blocked = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } == 0;
    if blocked {
        let (watched, env, started) = (shared.clone(), hook.env.clone(), hook.started);
        let spawned = std::thread::Builder::new()
            .name("memd-hook-signals".into())
            .spawn(move || watch(set, watched, env, started));
        if spawned.is_err() {
            // No watcher: give the signals back their default behaviour.
            // SAFETY: as above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        }
    }
    Guard { shared }
}

impl Guard {
    /// The handler takes the event to spool or reject it itself; false when the watcher already has
    /// it (the process is about to exit).
    pub fn claim(&self) -> bool {
        let (lock, _) = &*self.shared;
        let Ok(mut slot) = lock.lock() else { return true };
        match std::mem::replace(&mut *slot, Slot::Claimed) {
            Slot::Pending(_) => true,
            other => {
                *slot = other;
                false
            }
        }
    }

    /// The event is acknowledged or written: a later signal just exits. When the watcher has
    /// already taken the event, this waits for the watcher to finish its spool write and exit.
    pub fn done(&self) {
        let (lock, cvar) = &*self.shared;
        if let Ok(mut slot) = lock.lock() {
            if matches!(*slot, Slot::Watcher) {
                drop(slot);
                wait_for_exit();
            }
            *slot = Slot::Done;
        }
        cvar.notify_all();
    }
}

fn watch(set: libc::sigset_t, shared: Arc<(Mutex<Slot>, Condvar)>, env: HashMap<String, String>, started: Instant) {
    let mut sig: libc::c_int = 0;
    // SAFETY: sigwait with a valid set of signals blocked in this thread and an owned output.
    while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
    let (lock, cvar) = &*shared;
    let pending = match lock.lock() {
        Ok(mut slot) => loop {
            match std::mem::replace(&mut *slot, Slot::Watcher) {
                Slot::Pending(event) => break Some(event),
                Slot::Done | Slot::Watcher => break None,
                Slot::Claimed => {
                    // The handler is writing it: let it finish.
                    *slot = Slot::Claimed;
                    match cvar.wait(slot) {
                        Ok(s) => slot = s,
                        Err(_) => break None,
                    }
                }
            }
        },
        Err(_) => None,
    };
    if let Some(mut event) = pending {
        let hook = HookEnv::new(&env, started);
        spool(&hook, &mut event, &format!("signal {sig} before acknowledgement"));
    }
    #[allow(clippy::exit, reason = "the signal ends the hook: its event is spooled, nothing else is owed")]
    std::process::exit(0);
}
