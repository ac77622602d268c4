//! Runs the real `claw-tui` binary in a pseudo-terminal and reads its screen with vt100.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Upper bound for the screen to reach a state; a failure, never a synchronisation.
pub const DEADLINE: Duration = Duration::from_secs(30);

struct Shared {
    parser: vt100::Parser,
    closed: bool,
    /// How many background-colour queries (OSC 11) the program wrote.
    background_queries: usize,
    /// Inside a synchronized update (`?2026h` seen, `?2026l` not yet): the frame is
    /// half written, and a terminal that knows the mode would not show it.
    in_sync: bool,
    /// The last bytes read, so that a mode switch split between two reads is seen.
    tail: Vec<u8>,
    /// Whether xterm's modifyOtherKeys is on (`CSI >4;1m` or `;2m` last, not `;0m`).
    modify_other_keys: bool,
}

/// The start and the end of a synchronized update (xterm's mode 2026).
const SYNC_BEGIN: &[u8] = b"\x1b[?2026h";
const SYNC_END: &[u8] = b"\x1b[?2026l";
/// xterm's modifyOtherKeys switched on (levels 1 and 2) and off.
const MODIFY_OTHER_KEYS: [(&[u8], bool); 4] = [
    (b"\x1b[>4;1m", true),
    (b"\x1b[>4;2m", true),
    (b"\x1b[>4;0m", false),
    (b"\x1b[>4m", false),
];
/// Leaving the alternate screen: whatever frame was open is over.
const ALTERNATE_OFF: &[u8] = b"\x1b[?1049l";

impl Shared {
    /// Follows the synchronized-update and modifyOtherKeys switches in `bytes`: the
    /// last one of each decides.
    fn track_sync(&mut self, bytes: &[u8]) {
        let mut seen = std::mem::take(&mut self.tail);
        seen.extend_from_slice(bytes);
        let last = |marker: &[u8]| seen.windows(marker.len()).rposition(|w| w == marker);
        let end = [last(SYNC_END), last(ALTERNATE_OFF)]
            .into_iter()
            .flatten()
            .max();
        match (last(SYNC_BEGIN), end) {
            (Some(b), Some(e)) => self.in_sync = b > e,
            (Some(_), None) => self.in_sync = true,
            (None, Some(_)) => self.in_sync = false,
            (None, None) => {}
        }
        let last_switch = MODIFY_OTHER_KEYS
            .iter()
            .filter_map(|(marker, on)| Some((last(marker)?, *on)))
            .max_by_key(|(at, _)| *at);
        if let Some((_, on)) = last_switch {
            self.modify_other_keys = on;
        }
        let keep = seen.len().saturating_sub(SYNC_BEGIN.len() - 1);
        self.tail = seen.split_off(keep);
    }

    /// The screen as a terminal that honours synchronized updates shows it: `None`
    /// while a frame is half written (unless the program is gone).
    fn shown(&self) -> Option<&vt100::Screen> {
        (!self.in_sync || self.closed).then(|| self.parser.screen())
    }
}

/// The question a program asks to learn the terminal's background colour.
const BACKGROUND_QUERY: &[u8] = b"\x1b]11;?";
/// The primary device attributes request (DA1), which every terminal answers: programs
/// send it after a question a terminal may not know, to stop waiting when it comes back.
const DA1_QUERY: &[u8] = b"\x1b[c";
/// What this terminal answers to DA1 (a VT220 with ANSI colour, as xterm says).
const DA1_ANSWER: &[u8] = b"\x1b[?62;22c";
/// The kitty keyboard protocol's question: which of its flags are on.
const KITTY_QUERY: &[u8] = b"\x1b[?u";
/// The answer of a terminal that speaks the protocol (no flags on yet).
const KITTY_ANSWER: &[u8] = b"\x1b[?0u";

/// Which of a program's questions the terminal answers, and how.
#[derive(Clone, Debug)]
pub struct Answers {
    /// The background colour (OSC 11), as `rgb:ffff/ffff/ffff`; `None`: not answered.
    pub background: Option<String>,
    /// Device attributes (DA1), which nearly every terminal answers.
    pub da1: bool,
    /// The kitty keyboard protocol's flags (kitty, foot, WezTerm, Ghostty do; tmux and
    /// xterm do not).
    pub kitty: bool,
}

impl Default for Answers {
    /// As tmux and xterm: DA1 only.
    fn default() -> Self {
        Self {
            background: None,
            da1: true,
            kitty: false,
        }
    }
}

/// A running binary on a pseudo-terminal.
pub struct Tui {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    master: Option<Box<dyn MasterPty + Send>>,
    /// Written to make the reader thread stop (and close its end of the terminal).
    stop: Option<OwnedFd>,
    reader: Option<JoinHandle<()>>,
}

impl Tui {
    /// Starts the binary on the demo model at 120×40 in a sandbox laid out like
    /// `crate::support::bin::Sandbox` (`root/ws`, `root/config/config.toml`, data and state).
    pub fn demo(root: &Path, pace_ms: &str, extra: &[&str]) -> Tui {
        let mut args = vec!["--provider", "demo"];
        args.extend_from_slice(extra);
        Tui::in_sandbox(
            root,
            &args,
            &[("CLAW_TUI_DEMO_PACE_MS", pace_ms)],
            (120, 40),
        )
    }

    /// Starts the binary at 120×40 in the sandbox at `root` on the OpenAI-compatible
    /// server at `server_url` (its `/v1`, model `gpt-test`), with `extra` args added.
    pub fn openai_at(root: &Path, server_url: &str, extra: &[&str]) -> Tui {
        let base_url = format!("{server_url}/v1");
        let mut args = vec![
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "--model",
            "gpt-test",
        ];
        args.extend_from_slice(extra);
        Tui::in_sandbox(root, &args, &[], (120, 40))
    }

    /// Starts the binary with `args` in the sandbox at `root` (its config file,
    /// workspace, data, state and config dirs; `EDITOR=true`), `env` added last so it
    /// can override, in a terminal of `size` (columns, rows).
    pub fn in_sandbox(root: &Path, args: &[&str], env: &[(&str, &str)], size: (u16, u16)) -> Tui {
        Tui::in_sandbox_answering(root, args, env, size, &Answers::default())
    }

    /// As [`Tui::in_sandbox`], in a terminal that answers the questions `answers` says.
    pub fn in_sandbox_answering(
        root: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        size: (u16, u16),
        answers: &Answers,
    ) -> Tui {
        let config = root.join("config/config.toml");
        // --config must name a file that exists.
        if !config.exists() {
            std::fs::create_dir_all(root.join("config")).unwrap();
            std::fs::write(&config, "").unwrap();
        }
        let workspace = root.join("ws");
        let dir = |name: &str| root.join(name).display().to_string();
        let (data, state, xdg_config) = (dir("data"), dir("state"), dir("config"));
        let mut all_args = args.to_vec();
        all_args.extend([
            "--config",
            config.to_str().unwrap(),
            "--workspace",
            workspace.to_str().unwrap(),
        ]);
        let mut all_env = vec![
            ("XDG_DATA_HOME", data.as_str()),
            ("XDG_STATE_HOME", state.as_str()),
            ("XDG_CONFIG_HOME", xdg_config.as_str()),
            ("EDITOR", "true"),
        ];
        all_env.extend_from_slice(env);
        let program = env!("CARGO_BIN_EXE_claw-tui");
        Tui::spawn_answering(program, &all_args, &all_env, &workspace, size, answers)
    }

    /// Starts the binary with `args` and `env` in a `cols`×`rows` terminal.
    pub fn spawn(args: &[&str], env: &[(&str, &str)], cwd: &Path, cols: u16, rows: u16) -> Tui {
        let program = env!("CARGO_BIN_EXE_claw-tui");
        Tui::spawn_program(program, args, env, cwd, (cols, rows))
    }

    /// Starts `program` with `args` and `env` in a terminal of `size` (columns, rows).
    pub fn spawn_program(
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
        size: (u16, u16),
    ) -> Tui {
        Tui::spawn_answering(program, args, env, cwd, size, &Answers::default())
    }

    /// As [`Tui::spawn_program`], in a terminal that answers the questions `answers`
    /// says.
    pub fn spawn_answering(
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
        (cols, rows): (u16, u16),
        answers: &Answers,
    ) -> Tui {
        let background_answer = answers
            .background
            .as_ref()
            .map(|b| format!("\x1b]11;{b}\x1b\\").into_bytes());
        let (da1, kitty) = (answers.da1, answers.kitty);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(program);
        for a in args {
            cmd.arg(a);
        }
        cmd.cwd(cwd);
        for var in super::bin::PROVIDER_ENV
            .into_iter()
            .chain(["NO_COLOR", "TMUX"])
        {
            cmd.env_remove(var);
        }
        cmd.env("TERM", "xterm-256color");
        // A terminal that says it shows 24-bit colour (as vt100 does); the tests of
        // fewer colours set their own.
        cmd.env("COLORTERM", "truecolor");
        // A dark background said up front, so the client does not ask the terminal
        // (which this harness does not answer); the tests of that question set it.
        cmd.env("COLORFGBG", "15;0");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let shared = Arc::new((
            Mutex::new(Shared {
                parser: vt100::Parser::new(
                    std::num::NonZeroU16::new(rows).unwrap(),
                    std::num::NonZeroU16::new(cols).unwrap(),
                    0,
                ),
                closed: false,
                background_queries: 0,
                in_sync: false,
                tail: Vec::new(),
                modify_other_keys: false,
            }),
            Condvar::new(),
        ));
        let feed = shared.clone();
        // The thread waits for output or for `stop`, so that `hang_up` can end it and
        // close every descriptor of the terminal's master side.
        let master_fd = pair.master.as_raw_fd().unwrap();
        // SAFETY: the descriptor belongs to `pair.master`, which lives until after the
        // thread was joined (or the process ends); it is only duplicated here.
        let watched = nix::unistd::dup(unsafe { BorrowedFd::borrow_raw(master_fd) }).unwrap();
        let (stop_rx, stop) = nix::unistd::pipe().unwrap();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                let mut fds = [
                    PollFd::new(watched.as_fd(), PollFlags::POLLIN),
                    PollFd::new(stop_rx.as_fd(), PollFlags::POLLIN),
                ];
                if poll(&mut fds, PollTimeout::NONE).is_err() {
                    continue;
                }
                if fds[1].any().unwrap_or(false) {
                    return;
                }
                let n = reader.read(&mut buf).unwrap_or(0);
                let (lock, cvar) = &*feed;
                // A test that failed while holding the lock must not hide its message.
                let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
                if n == 0 {
                    s.closed = true;
                    cvar.notify_all();
                    return;
                }
                s.parser.process(&buf[..n]);
                s.track_sync(&buf[..n]);
                let asked = buf[..n]
                    .windows(BACKGROUND_QUERY.len())
                    .filter(|w| *w == BACKGROUND_QUERY)
                    .count();
                s.background_queries += asked;
                // Answered as a terminal does (writing to the master side is typing),
                // in the order asked: the background or the keyboard flags before DA1.
                let holds = |query: &[u8]| buf[..n].windows(query.len()).any(|w| w == query);
                if let Some(answer) = background_answer.as_deref().filter(|_| asked > 0) {
                    let _ = nix::unistd::write(&watched, answer);
                }
                if kitty && holds(KITTY_QUERY) {
                    let _ = nix::unistd::write(&watched, KITTY_ANSWER);
                }
                if da1 && holds(DA1_QUERY) {
                    let _ = nix::unistd::write(&watched, DA1_ANSWER);
                }
                cvar.notify_all();
            }
        });
        Tui {
            shared,
            writer,
            child,
            master: Some(pair.master),
            stop: Some(stop),
            reader: Some(thread),
        }
    }

    /// Closes the terminal, as closing its window does: every descriptor of the master
    /// side goes, so the kernel hangs up the program's side (SIGHUP, then EIO on reads
    /// and writes). The screen keeps what it showed last.
    pub fn hang_up(&mut self) {
        if let Some(stop) = self.stop.take() {
            nix::unistd::write(&stop, b"x").unwrap();
        }
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        // Dropping portable-pty's writer types a newline and the EOF character (Ctrl+D)
        // so that a line-mode program sees the end of its input; a closing window types
        // nothing, and the client would read them as Enter and Ctrl+D and quit before
        // the hang-up. With no EOF character set, the writer's drop writes nothing.
        if let Some(fd) = self.master.as_ref().and_then(|m| m.as_raw_fd()) {
            use nix::sys::termios::{SetArg, SpecialCharacterIndices, tcgetattr, tcsetattr};
            // SAFETY: the descriptor belongs to `self.master`, alive for this block.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let mut modes = tcgetattr(fd).unwrap();
            modes.control_chars[SpecialCharacterIndices::VEOF as usize] = 0;
            tcsetattr(fd, SetArg::TCSANOW, &modes).unwrap();
        }
        self.writer = Box::new(std::io::sink());
        self.master = None;
    }

    /// Waits for the process to exit after [`Tui::hang_up`]: its exit code, or the
    /// signal that ended it.
    pub fn wait_hung_up(&mut self) -> (u32, Option<String>) {
        let status = self.child.wait().unwrap();
        (status.exit_code(), status.signal().map(str::to_owned))
    }

    /// Types bytes into the terminal.
    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits until the program asked for the terminal's background colour.
    pub fn wait_background_query(&self) {
        let (lock, cvar) = &*self.shared;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
        while s.background_queries == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no background query (OSC 11) was written");
            s = cvar
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// What `read` makes of the screen as it is now (its colours, say).
    pub fn with_screen<R>(&self, read: impl FnOnce(&vt100::Screen) -> R) -> R {
        let (lock, _) = &*self.shared;
        let s = lock.lock().unwrap_or_else(|p| p.into_inner());
        read(s.parser.screen())
    }

    /// The screen as text.
    pub fn text(&self) -> String {
        self.shared.0.lock().unwrap().parser.screen().contents()
    }

    /// Waits until `pred` holds for the screen; panics with the screen at the deadline.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&vt100::Screen) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        let (lock, cvar) = &*self.shared;
        let mut s = lock.lock().unwrap();
        loop {
            if let Some(screen) = s.shown().filter(|screen| pred(screen)) {
                return screen.contents();
            }
            let now = Instant::now();
            if now >= deadline || s.closed {
                panic!(
                    "timed out waiting for {what} (closed: {}, inside a frame: {}); \
                     screen:\n{}",
                    s.closed,
                    s.in_sync,
                    s.parser.screen().contents()
                );
            }
            s = cvar.wait_timeout(s, deadline - now).unwrap().0;
        }
    }

    /// Waits until the screen shows `needle`.
    pub fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?}"), |s| s.contents().contains(needle))
    }

    /// Quits with Ctrl-D and asserts a clean exit: code 0, the main screen restored.
    pub fn quit(mut self) {
        self.send("\x04");
        let (code, alternate, _) = self.wait_exit();
        assert_eq!((code, alternate), (0, false));
    }

    /// Waits for the process to exit and for its last output to be read.
    pub fn wait_exit(&mut self) -> (u32, bool, bool) {
        let status = self.child.wait().unwrap();
        let (lock, cvar) = &*self.shared;
        let deadline = Instant::now() + DEADLINE;
        let mut s = lock.lock().unwrap();
        while !s.closed && Instant::now() < deadline {
            s = cvar.wait_timeout(s, deadline - Instant::now()).unwrap().0;
        }
        let screen = s.parser.screen();
        (
            status.exit_code(),
            screen.alternate_screen(),
            screen.hide_cursor(),
        )
    }

    /// The terminal as the program left it after [`Tui::wait_exit`]: whether it is still
    /// in raw mode (no line editing, no echo), and whether the screen still reports the
    /// mouse, takes bracketed paste or has modifyOtherKeys on.
    pub fn modes_left(&self) -> LeftModes {
        use nix::sys::termios::{LocalFlags, tcgetattr};
        let fd = self.master.as_ref().and_then(|m| m.as_raw_fd()).unwrap();
        // SAFETY: the descriptor belongs to `self.master`, alive for this call.
        let modes = tcgetattr(unsafe { BorrowedFd::borrow_raw(fd) }).unwrap();
        let s = self.shared.0.lock().unwrap();
        let screen = s.parser.screen();
        LeftModes {
            raw: !modes
                .local_flags
                .contains(LocalFlags::ICANON | LocalFlags::ECHO),
            mouse: screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None,
            bracketed_paste: screen.bracketed_paste(),
            modify_other_keys: s.modify_other_keys,
        }
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.child.process_id().unwrap() as i32
    }
}

/// What a program left of its terminal modes (see [`Tui::modes_left`]).
#[derive(Debug, PartialEq, Eq)]
pub struct LeftModes {
    /// Still raw: no line editing or no echo.
    pub raw: bool,
    /// Mouse reporting still on.
    pub mouse: bool,
    /// Bracketed paste still on.
    pub bracketed_paste: bool,
    /// xterm's modifyOtherKeys still on.
    pub modify_other_keys: bool,
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The row of the screen that holds the status bar (the last one).
pub fn status_line(screen: &vt100::Screen) -> String {
    screen
        .contents()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

/// Runs the binary with `args` and `env` on a pseudo-terminal to its end, in `cwd`:
/// its exit code and every byte it wrote to the terminal (stdout and stderr both),
/// untouched by any terminal emulator.
pub fn run_raw(args: &[&str], env: &[(&str, &str)], cwd: &Path) -> (u32, Vec<u8>) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_claw-tui"));
    for a in args {
        cmd.arg(a);
    }
    cmd.cwd(cwd);
    for var in super::bin::PROVIDER_ENV
        .into_iter()
        .chain(["NO_COLOR", "TMUX"])
    {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    // Read until the program's side is closed: EOF, or EIO once it has exited.
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
    }
    let status = child.wait().unwrap();
    (status.exit_code(), bytes)
}
