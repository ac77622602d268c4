//! `claw-tui attach ID`: the full-screen client on a session another process serves.
//! The app is the same; only its host differs: the session's lines come from the
//! socket and become the messages a local session's events would, and what the user
//! does goes back as commands (see `remote/effects.rs`). Quitting, or closing the
//! terminal, detaches: the session goes on for whoever else is attached.

mod effects;
mod lines;

use super::colors::Depth;
use super::input::TermInput;
use super::terminal::{self, Term};
use crate::agent::NoticeLevel;
use crate::config::Settings;
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED};
use crate::tui::highlight::Highlighter;
use crate::tui::msg::{Effect, Msg};
use crate::tui::{App, view};
use color_eyre::eyre::{bail, eyre};
use crossterm::event::Event;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use effects::Action;
use lines::Me;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Shortest time between two frames.
const FRAME: Duration = Duration::from_micros(16_667);
/// Spinner and elapsed-time period while the session works.
const TICK: Duration = Duration::from_millis(100);

/// Attaches the client to the session on `socket`; returns the exit code once the user
/// detached (or a signal or a lost connection ended it).
pub fn attach(settings: &Settings, socket: &Path) -> color_eyre::Result<i32> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))?;
    let code = runtime.block_on(run(settings, socket));
    runtime.shutdown_background();
    code
}

async fn run(settings: &Settings, socket: &Path) -> color_eyre::Result<i32> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| eyre!("cannot connect to {}: {e}", socket.display()))?;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    send(
        &mut write,
        &serde_json::json!({"type": "attach", "name": "claw-tui attach"}),
    )
    .await
    .map_err(|e| eyre!("cannot attach: {e}"))?;
    // Up to the snapshot before the screen is taken: what it says sets the status bar,
    // and a refusal is better said on a plain terminal.
    let first = tokio::time::timeout(JOIN_WAIT, until_snapshot(&mut lines))
        .await
        .map_err(|_| eyre!("{} did not answer the attach in time", socket.display()))?
        .map_err(|e| eyre!("cannot attach through {}: {e}", socket.display()))?;
    let mut stop = crate::signals::StopSignals::install()
        .map_err(|e| eyre!("cannot take over the stop signals: {e}"))?;
    let mut config = super::app_config::app_config(settings, first.model.clone())?;
    config.provider = first.provider.clone();
    config.workspace = first.workspace.clone();
    terminal::install_panic_hook();
    if let Err(e) = terminal::enter(config.mouse_capture) {
        terminal::leave();
        bail!(
            "cannot set up the terminal ({e}); attach from an interactive terminal, or use --mode rpc"
        );
    }
    let mut term = match terminal::terminal(Depth::of_terminal(settings.file.ui.colors)) {
        Ok(term) => term,
        Err(e) => {
            terminal::leave();
            bail!("cannot open the terminal: {e}");
        }
    };
    let mut client = Client {
        app: App::new(config),
        write,
        me: Me::default(),
        highlighter: Highlighter::default(),
        inbox: mpsc::unbounded_channel(),
        data_dir: settings.data_dir.clone(),
        theme_dir: crate::theme::user_theme_dir(&settings.config_path),
        clipboard: super::clipboard::Clipboard::default(),
        quit: false,
    };
    if let Ok(size) = term.size() {
        client
            .apply(
                vec![Msg::Term(Event::Resize(size.width, size.height))],
                &mut term,
            )
            .await;
    }
    for line in first.lines {
        let msgs = lines::to_msgs(&line, &mut client.me);
        client.apply(msgs, &mut term).await;
    }
    let ended = client.serve(&mut term, &mut lines, &mut stop).await;
    terminal::leave();
    match ended {
        Ended::Detached => Ok(EXIT_OK),
        Ended::Signal(code) => Ok(code),
        Ended::HangUp => Ok(129),
        Ended::Lost(why) => {
            eprintln!("claw-tui: the connection to the session ended: {why}");
            Ok(EXIT_RUN_FAILED)
        }
    }
}

/// How long the session has to answer the attach with its snapshot.
const JOIN_WAIT: Duration = Duration::from_secs(10);

/// The lines up to the snapshot, and what the status bar takes from them.
struct First {
    lines: Vec<String>,
    provider: String,
    model: String,
    workspace: String,
}

/// Reads `hello`, the attach response and the snapshot (and what came between).
async fn until_snapshot(
    lines: &mut tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
) -> Result<First, String> {
    let mut first = First {
        lines: Vec::new(),
        provider: String::new(),
        model: String::new(),
        workspace: String::new(),
    };
    loop {
        let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? else {
            return Err("the session closed the connection".into());
        };
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|_| "it does not speak claw-tui's protocol")?;
        match value["type"].as_str() {
            Some("hello") => {
                first.provider = value["session"]["provider"].as_str().unwrap_or("").into();
                let workspace = value["session"]["workspace"].as_str().unwrap_or("");
                first.workspace = crate::visible::visible(workspace).into_owned();
            }
            Some("response") if value["ok"] == false => {
                return Err(value["error"].as_str().unwrap_or("refused").into());
            }
            Some("snapshot") => {
                first.model = value["state"]["model"].as_str().unwrap_or("").into();
                first.lines.push(line);
                return Ok(first);
            }
            None if first.lines.is_empty() => {
                return Err("it does not speak claw-tui's protocol".into());
            }
            _ => {}
        }
        first.lines.push(line);
    }
}

/// How the attached client ended.
enum Ended {
    Detached,
    Signal(i32),
    HangUp,
    Lost(String),
}

struct Client {
    app: App,
    write: OwnedWriteHalf,
    me: Me,
    highlighter: Highlighter,
    /// Answers of work done here (highlighting, a theme loaded).
    inbox: (mpsc::UnboundedSender<Msg>, mpsc::UnboundedReceiver<Msg>),
    data_dir: std::path::PathBuf,
    theme_dir: Option<std::path::PathBuf>,
    /// Copies through the terminal (and whether tmux's needs were said).
    clipboard: super::clipboard::Clipboard,
    quit: bool,
}

impl Client {
    async fn serve(
        &mut self,
        term: &mut Term,
        lines: &mut tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
        stop: &mut crate::signals::StopSignals,
    ) -> Ended {
        let mut input = match TermInput::open() {
            Ok(input) => input,
            Err(e) => return Ended::Lost(format!("the terminal cannot be read: {e}")),
        };
        let mut last_draw = Instant::now();
        let mut last_tick = Instant::now();
        if let Err(e) = self.draw(term) {
            return Ended::Lost(format!("the terminal failed: {e}"));
        }
        loop {
            let draw_at = self
                .app
                .needs_draw()
                .then(|| (last_draw + FRAME).max(Instant::now()));
            let tick_at = if self.app.busy() {
                Some(last_tick + TICK)
            } else {
                self.app.next_deadline().map(Instant::from_std)
            };
            let mut msgs = Vec::new();
            tokio::select! {
                biased;
                code = stop.recv() => return Ended::Signal(code),
                event = input.next() => match event {
                    Some(Ok(event)) => msgs.push(Msg::Term(event)),
                    Some(Err(_)) | None => return Ended::HangUp,
                },
                line = lines.next_line() => match line {
                    Ok(Some(line)) => msgs.extend(lines::to_msgs(&line, &mut self.me)),
                    Ok(None) => return Ended::Lost("the session closed it".into()),
                    Err(e) => return Ended::Lost(e.to_string()),
                },
                Some(msg) = self.inbox.1.recv() => msgs.push(msg),
                () = sleep_until(draw_at) => {}
                () = sleep_until(tick_at) => {
                    last_tick = Instant::now();
                    msgs.push(Msg::Tick);
                }
            }
            self.apply(msgs, term).await;
            if self.quit {
                let _ = send(&mut self.write, &serde_json::json!({"type": "detach"})).await;
                return Ended::Detached;
            }
            if self.app.needs_draw() && Instant::now() >= last_draw + FRAME {
                if let Err(e) = self.draw(term) {
                    return Ended::Lost(format!("the terminal failed: {e}"));
                }
                last_draw = Instant::now();
            }
        }
    }

    /// Feeds `msgs` to the app and carries out what it asks, until nothing is left.
    async fn apply(&mut self, msgs: Vec<Msg>, term: &mut Term) {
        let mut pending: std::collections::VecDeque<Msg> = msgs.into();
        while let Some(msg) = pending.pop_front() {
            for effect in self.app.update(msg) {
                match effects::sort(effect) {
                    Action::Send(command) => {
                        if let Err(e) = send(&mut self.write, &command).await {
                            pending.push_back(Msg::Notice(
                                NoticeLevel::Error,
                                format!("cannot reach the session: {e}"),
                            ));
                        }
                    }
                    Action::Quit => self.quit = true,
                    Action::Local(effect) => self.local(effect, term),
                    Action::Say(msg) => pending.push_back(msg),
                    Action::Nothing => {}
                }
            }
        }
    }

    /// What this terminal does for itself, as the local client would.
    fn local(&mut self, effect: Effect, term: &mut Term) {
        let tx = self.inbox.0.clone();
        match effect {
            Effect::Highlight(request) => self.highlighter.request(request, &tx),
            Effect::Copy(text) => {
                let in_tmux = super::clipboard::in_tmux();
                let notice = match self.clipboard.copy(term.backend_mut(), &text, in_tmux) {
                    Ok(hint) => hint.map(|hint| (NoticeLevel::Info, hint.to_owned())),
                    Err(e) => Some((NoticeLevel::Error, format!("cannot copy: {e}"))),
                };
                if let Some((level, text)) = notice {
                    let _ = tx.send(Msg::Notice(level, text));
                }
            }
            Effect::SaveHistory(text) => {
                let dir = self.data_dir.clone();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = super::history::append(&dir, &text) {
                        tracing::warn!("cannot save the history: {e}");
                    }
                });
            }
            Effect::SetMouseCapture(on) => {
                if let Err(e) = terminal::set_mouse(on) {
                    tracing::warn!("cannot change mouse capture: {e}");
                }
            }
            Effect::SetTheme(name) => {
                let dir = self.theme_dir.clone();
                tokio::task::spawn_blocking(move || {
                    let loaded = crate::theme::Theme::load(&name, dir.as_deref());
                    let _ = tx.send(Msg::ThemeLoaded(loaded.map(Box::new)));
                });
            }
            _ => {}
        }
    }

    fn draw(&mut self, term: &mut Term) -> std::io::Result<()> {
        for effect in self.app.update(Msg::Frame) {
            if let Action::Local(effect) = effects::sort(effect) {
                self.local(effect, term);
            }
        }
        queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
        term.draw(|frame| view(&self.app, frame))?;
        execute!(term.backend_mut(), EndSynchronizedUpdate)?;
        Ok(())
    }
}

async fn send(write: &mut OwnedWriteHalf, command: &serde_json::Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(command).map_err(std::io::Error::other)?;
    line.push(b'\n');
    write.write_all(&line).await
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
