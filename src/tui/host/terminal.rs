//! Terminal hygiene: raw mode and the alternate screen on the way in; everything undone
//! on the way out, whether by quitting, an error, a panic, a signal, suspending (Ctrl+Z)
//! or handing the terminal to `$EDITOR`.

use super::colors::{Depth, Fitted};
use crate::tui::msg::EditorError;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode,
    enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, BufWriter, Stdout, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The terminal the app draws on, in the colours it shows; writes are buffered and
/// flushed once per frame.
pub type Term = Terminal<Fitted<CrosstermBackend<BufWriter<Screen>>>>;

/// Whether the terminal is in the app's mode (so a panic knows to restore it).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the terminal hung up (see [`is_hangup`]).
static GONE: AtomicBool = AtomicBool::new(false);

/// Standard output as the drawing target. Once a write has found the terminal gone, it
/// reports that error once (so the loop ends and saves the session) and then takes every
/// later write without doing it: ratatui, dropping its terminal, would otherwise try to
/// show the cursor on the dead terminal and `eprintln!` the failure, which panics.
pub struct Screen(Stdout);

impl Write for Screen {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if GONE.load(Ordering::SeqCst) {
            return Ok(buf.len());
        }
        self.0.write(buf).inspect_err(note_hangup)
    }

    fn flush(&mut self) -> io::Result<()> {
        if GONE.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.0.flush().inspect_err(note_hangup)
    }
}

/// Marks the terminal as gone (a read found it so): nothing more is written to it.
pub fn hung_up() {
    GONE.store(true, Ordering::SeqCst);
}

fn note_hangup(error: &io::Error) {
    if is_hangup(error) {
        GONE.store(true, Ordering::SeqCst);
    }
}
/// Whether the mouse is captured (restored after suspend and the editor).
static MOUSE: AtomicBool = AtomicBool::new(false);

/// xterm's modifyOtherKeys at level 1: keys with modifiers that would otherwise send
/// the same bytes as without (Shift+Enter, Ctrl+Enter, Alt+Enter) come as
/// `CSI 27;mods;key~`, which `input` decodes; Ctrl+letter keys keep their control
/// bytes. xterm and tmux (with `extended-keys` on) answer it; the kitty protocol, where
/// the terminal has both, takes precedence; other terminals ignore it.
struct ModifyOtherKeys(bool);

impl crossterm::Command for ModifyOtherKeys {
    fn write_ansi(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        // Off is `CSI >4m`: back to the terminal's own setting (an xterm configured
        // with modifyOtherKeys keeps it), which tmux reads as off.
        f.write_str(if self.0 { "\x1b[>4;1m" } else { "\x1b[>4m" })
    }
}

/// Switches to raw mode and the alternate screen, with bracketed paste, unambiguous
/// key codes (the kitty protocol and xterm's modifyOtherKeys, so Shift+Enter can be
/// told apart where the terminal supports either) and, when asked, mouse capture.
pub fn enter(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    MOUSE.store(mouse, Ordering::SeqCst);
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
        ModifyOtherKeys(true),
        cursor::Hide
    )?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// Whether the terminal is known at start to tell Shift+Enter from Enter: when it
/// speaks the kitty keyboard protocol (asked by `probe`, with a bounded wait). Whether
/// modifyOtherKeys reaches the client cannot be asked (tmux answers for itself, not for
/// its `extended-keys` option), so there the client learns it from the first
/// Shift+Enter that arrives as one.
pub fn tells_shift_enter_apart() -> bool {
    super::probe::kitty_keyboard()
}

/// Undoes `enter`; safe to call more than once and from a panic hook. A write that
/// finds the terminal hung up marks it gone, so nothing more is written to it.
pub fn leave() {
    if !ACTIVE.swap(false, Ordering::SeqCst) || GONE.load(Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    // Best effort: each step is tried even if an earlier one failed. A frame cut off
    // (a panic while drawing) would leave the terminal holding its output back.
    let _ = execute!(out, EndSynchronizedUpdate).inspect_err(note_hangup);
    if MOUSE.load(Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture).inspect_err(note_hangup);
    }
    let _ =
        execute!(out, ModifyOtherKeys(false), PopKeyboardEnhancementFlags).inspect_err(note_hangup);
    let _ = execute!(out, DisableBracketedPaste).inspect_err(note_hangup);
    let _ = execute!(out, LeaveAlternateScreen, cursor::Show).inspect_err(note_hangup);
    let _ = disable_raw_mode();
    let _ = out.flush().inspect_err(note_hangup);
}

/// Whether `error` means the terminal is gone (its window was closed, the SSH link
/// dropped): reads and writes on a hung-up terminal fail with EIO, a closed pipe with
/// EPIPE. The app then saves and exits as it would on SIGHUP, and writes nothing more.
pub fn is_hangup(error: &io::Error) -> bool {
    use nix::errno::Errno;
    error.kind() == io::ErrorKind::BrokenPipe
        || error.raw_os_error().is_some_and(|code| {
            [Errno::EIO, Errno::EPIPE, Errno::ENXIO, Errno::ENOTTY]
                .iter()
                .any(|e| *e as i32 == code)
        })
}

/// Writes a line for the user on stderr, after the screen was given back; unlike
/// `eprintln!` it does not panic when stderr is a terminal that is gone.
pub fn tell(line: &str) {
    if !GONE.load(Ordering::SeqCst) {
        let _ = writeln!(io::stderr(), "{line}");
    }
}

/// Turns mouse capture on or off.
pub fn set_mouse(on: bool) -> io::Result<()> {
    MOUSE.store(on, Ordering::SeqCst);
    if on {
        execute!(io::stdout(), EnableMouseCapture)
    } else {
        execute!(io::stdout(), DisableMouseCapture)
    }
}

/// Creates the ratatui terminal over buffered stdout, drawing in the colours of `depth`.
pub fn terminal(depth: Depth) -> io::Result<Term> {
    tracing::info!("drawing in {}", depth.words());
    let screen = BufWriter::with_capacity(1 << 16, Screen(io::stdout()));
    Terminal::new(Fitted::new(CrosstermBackend::new(screen), depth))
}

/// Restores the terminal before a panic on the UI thread is reported (by color-eyre's
/// hook); panics elsewhere go to the log, since printing them would garble the screen.
pub fn install_panic_hook() {
    let ui_thread = std::thread::current().id();
    let (panic_hook, _) = color_eyre::config::HookBuilder::default()
        .display_env_section(false)
        .into_hooks();
    let report = panic_hook.into_panic_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The log is the only place a panic off the UI thread is seen: say where it came from.
        let trace = std::backtrace::Backtrace::force_capture();
        tracing::error!("panic: {info}\n{trace}");
        if std::thread::current().id() == ui_thread || !ACTIVE.load(Ordering::SeqCst) {
            leave();
            report(info);
        }
    }));
}

/// Gives the terminal back to the shell and stops the process (Ctrl+Z, or a SIGTSTP
/// from outside); returns once the shell resumes it, with the app's terminal mode back
/// on. Continued in the background, the process stops again inside `enter` before the
/// terminal is changed (SIGTTOU, see `crate::signals`), until it is in the foreground.
pub fn suspend() -> io::Result<()> {
    let mouse = MOUSE.load(Ordering::SeqCst);
    leave();
    let stopped = crate::signals::stop_process();
    // Taken back even when stopping failed: the screen must not stay given away.
    enter(mouse)?;
    stopped
}

/// Runs `$VISUAL`/`$EDITOR` (default `vi`) on `text` with the terminal handed over;
/// returns the edited text.
pub fn edit_externally(text: &str) -> Result<String, EditorError> {
    let failed =
        |variant: fn(Arc<io::Error>) -> EditorError| move |e: io::Error| variant(Arc::new(e));
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let mut file = tempfile::Builder::new()
        .prefix("claw-tui-message-")
        .suffix(".md")
        .tempfile()
        .map_err(failed(EditorError::CreateTemp))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(failed(EditorError::WriteTemp))?;
    let mouse = MOUSE.load(Ordering::SeqCst);
    leave();
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(words)
        .arg(file.path())
        .status();
    let entered = enter(mouse);
    let status = status.map_err(|e| EditorError::Start {
        editor: editor.clone(),
        source: Arc::new(e),
    })?;
    entered.map_err(failed(EditorError::RestoreTerminal))?;
    if !status.success() {
        return Err(EditorError::Failed { editor, status });
    }
    std::fs::read_to_string(file.path()).map_err(failed(EditorError::ReadBack))
}
