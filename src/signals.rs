//! The signals that end the process, taken over in every mode: SIGINT, SIGTERM, SIGHUP
//! and every other signal whose default action would kill it at once (`kill -INT`,
//! `timeout -s INT`, a supervisor's SIGQUIT or SIGUSR1...). Whoever holds
//! [`StopSignals`] ends as it does for SIGTERM: the run aborted and what it streamed
//! saved as aborted, the terminal given back where there is one, and the exit code
//! 128 + the signal's number. A second signal while that is under way exits at once.
//!
//! The job-control stops. In the client, SIGTSTP from outside (`kill -TSTP`, a shell's
//! job control) is taken over ([`Suspends`]) and does what Ctrl+Z does: the terminal is
//! given back (raw mode, alternate screen, mouse, bracketed paste, keyboard flags, the
//! cursor shown), the process stops ([`stop_process`]), and once continued it takes the
//! terminal again and redraws the whole screen. A run in progress stops with the process
//! and carries on when it continues. SIGTTIN and SIGTTOU keep their default action, as
//! in vim and htop: the kernel sends them for a terminal operation from a background
//! process group and refuses that operation, so the process stops before the terminal
//! is changed at all. `claw-tui &` stops at its first attempt to set raw mode, and `fg`
//! starts it normally; a client continued in the background (`bg` after a suspend)
//! stops again as it tries to take the terminal back, and `fg` finishes taking it. A
//! handler would be worse: the kernel restarts the refused operation after a handler
//! returns, and sends the signal again. In the headless modes (-p, json, rpc) all three
//! keep their default action: there is no terminal mode to give back.
//!
//! Left as they are: SIGKILL and SIGSTOP (they cannot be caught); the faults a signal
//! reports (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT), which come from
//! the process itself; SIGPIPE, which Rust ignores (a closed pipe is a write error);
//! and the last real-time signal, which the async runtime cannot register.

use nix::sys::signal::Signal as Sig;
use std::io::Write;
use std::task::Poll;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::exit::EXIT_SIGHUP;

/// The standard signals whose default action ends the process and that come from
/// outside it (the faults are left to their default).
const ENDING: [Sig; 14] = [
    Sig::SIGHUP,
    Sig::SIGINT,
    Sig::SIGQUIT,
    Sig::SIGUSR1,
    Sig::SIGUSR2,
    Sig::SIGALRM,
    Sig::SIGTERM,
    Sig::SIGSTKFLT,
    Sig::SIGXCPU,
    Sig::SIGXFSZ,
    Sig::SIGVTALRM,
    Sig::SIGPROF,
    Sig::SIGIO,
    Sig::SIGPWR,
];

/// Every signal number [`StopSignals`] takes over: [`ENDING`], then the real-time
/// signals (their default action ends the process too) but the last, whose number is
/// past what the async runtime can register.
pub fn stop_signal_numbers() -> Vec<i32> {
    let mut numbers: Vec<i32> = ENDING.iter().map(|s| *s as i32).collect();
    numbers.extend(nix::libc::SIGRTMIN()..nix::libc::SIGRTMAX());
    numbers
}

/// The stop signals of a run, taken over from their default action.
pub struct StopSignals {
    streams: Vec<(i32, Signal)>,
}

impl StopSignals {
    /// Takes over every stop signal (inside a Tokio runtime); from now on none of them
    /// ends the process by itself.
    pub fn install() -> std::io::Result<Self> {
        let streams = stop_signal_numbers()
            .into_iter()
            .map(|n| Ok((n, signal(SignalKind::from_raw(n))?)))
            .collect::<std::io::Result<_>>()?;
        Ok(Self { streams })
    }

    /// Waits for the next stop signal; the exit code it asks for (128 + its number).
    /// Cheap to start and to drop: the loops that stop on a signal make this future
    /// anew for every event they take, so it polls the streams in place (about 45 of
    /// them) instead of boxing a future per stream each time.
    pub async fn recv(&mut self) -> i32 {
        std::future::poll_fn(|cx| {
            for (number, stream) in &mut self.streams {
                // A stream ends (`None`) only with the runtime: nothing comes from it.
                if let Poll::Ready(Some(())) = stream.poll_recv(cx) {
                    return Poll::Ready(crate::exit::after_signal(*number));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Waits for a stop signal after the first one: one that asks again to stop at
    /// once. A closing terminal sends SIGHUP twice (to the session's leader and to its
    /// foreground group), so a SIGHUP never counts as asking again.
    pub async fn recv_again(&mut self) -> i32 {
        loop {
            let code = self.recv().await;
            if code != EXIT_SIGHUP {
                return code;
            }
        }
    }

    /// After the first signal: from now on, another one ends the process at once (see
    /// [`Self::recv_again`]).
    pub fn exit_on_next(mut self) {
        tokio::spawn(async move {
            let code = self.recv_again().await;
            tell("claw-tui: stopped again; exiting without waiting");
            // Not waiting for the run, but its commands are stopped and checked.
            crate::tools::exec::stop_commands_and_report();
            std::process::exit(code);
        });
    }
}

/// SIGTSTP from outside the client, taken over from its default action so the
/// terminal is given back before the process stops (see the module's doc).
pub struct Suspends(Signal);

impl Suspends {
    /// Takes over SIGTSTP (inside a Tokio runtime): from now on it no longer stops the
    /// process by itself; [`stop_process`] does, once the terminal is given back.
    pub fn install() -> std::io::Result<Self> {
        signal(SignalKind::from_raw(Sig::SIGTSTP as i32)).map(Self)
    }

    /// Waits for the next SIGTSTP.
    pub async fn recv(&mut self) {
        // A stream ends only with the runtime: then nothing is coming.
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// Stops the process as a SIGTSTP does by default, and returns once it is continued.
/// SIGTSTP is raised with its default action put back for the moment (as vim and
/// ncurses do), not SIGSTOP: the kernel drops it where nobody could continue the
/// process (an orphaned process group: no job-control shell above it, as for the
/// session's leader in a tmux pane or under `ssh -t`), and then this returns at once
/// instead of leaving a process stopped for good. A shell also reports it as a plain
/// "Stopped".
pub fn stop_process() -> std::io::Result<()> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, raise, sigaction};
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    // SAFETY: the default action runs no code of this process; the action taken over is
    // put back below, whatever raising did.
    let taken = unsafe { sigaction(Sig::SIGTSTP, &default) }.map_err(std::io::Error::from)?;
    // The signal is delivered to this thread before `raise` returns: the process stops
    // there, and goes on from here when continued.
    let raised = raise(Sig::SIGTSTP);
    // SAFETY: puts back the action that was there (the runtime's handler, or none).
    let restored = unsafe { sigaction(Sig::SIGTSTP, &taken) };
    raised.map_err(std::io::Error::from)?;
    restored.map(drop).map_err(std::io::Error::from)
}

/// The name of the signal an exit code stands for (`SIGINT` for 130), for messages.
pub fn signal_name(code: i32) -> String {
    let number = code - 128;
    match Sig::try_from(number) {
        Ok(sig) => sig.as_str().to_owned(),
        Err(_) if (nix::libc::SIGRTMIN()..=nix::libc::SIGRTMAX()).contains(&number) => {
            format!("SIGRTMIN+{}", number - nix::libc::SIGRTMIN())
        }
        Err(_) => "a signal".to_owned(),
    }
}

/// Writes a line on stderr that may have no reader left (the terminal of a hung-up
/// session): unlike `eprintln!`, a failed write is not a panic.
pub fn tell(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{EXIT_SIGINT, EXIT_SIGTERM};

    #[test]
    fn exit_codes_name_their_signals() {
        assert_eq!(signal_name(EXIT_SIGINT), "SIGINT");
        assert_eq!(signal_name(EXIT_SIGHUP), "SIGHUP");
        assert_eq!(signal_name(EXIT_SIGTERM), "SIGTERM");
        assert_eq!(signal_name(128 + 10), "SIGUSR1");
        let rt = 128 + nix::libc::SIGRTMIN() + 3;
        assert_eq!(signal_name(rt), "SIGRTMIN+3");
        assert_eq!(signal_name(7), "a signal");
    }

    /// A closing terminal's second SIGHUP is not a second request to stop (which would
    /// exit before the session is saved); another signal is.
    #[test]
    fn a_repeated_sighup_does_not_ask_again() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut stop = StopSignals::install().unwrap();
            nix::sys::signal::raise(Sig::SIGHUP).unwrap();
            assert_eq!(stop.recv().await, EXIT_SIGHUP);
            nix::sys::signal::raise(Sig::SIGHUP).unwrap();
            let again =
                tokio::time::timeout(std::time::Duration::from_millis(200), stop.recv_again());
            assert!(again.await.is_err(), "a second SIGHUP is not asking again");
            nix::sys::signal::raise(Sig::SIGUSR2).unwrap();
            assert_eq!(stop.recv_again().await, 128 + Sig::SIGUSR2 as i32);
        });
    }

    #[test]
    fn the_faults_and_the_stops_keep_their_default_action() {
        let numbers = stop_signal_numbers();
        for kept in [
            Sig::SIGSEGV,
            Sig::SIGBUS,
            Sig::SIGILL,
            Sig::SIGFPE,
            Sig::SIGABRT,
            Sig::SIGTRAP,
            Sig::SIGSYS,
            Sig::SIGPIPE,
            Sig::SIGTSTP,
            Sig::SIGTTIN,
            Sig::SIGTTOU,
            Sig::SIGCONT,
            Sig::SIGCHLD,
            Sig::SIGWINCH,
        ] {
            assert!(!numbers.contains(&(kept as i32)), "{kept}");
        }
        assert!(numbers.contains(&(Sig::SIGINT as i32)));
        assert!(numbers.contains(&nix::libc::SIGRTMIN()));
    }
}
