//! `claw-tui replay`: a recorded session played back in the normal client, its events
//! driving the same `App::update` as live ones at their original pace (divided by the
//! speed), or printed as the JSON lines `--mode json` printed.
//!
//! Nothing here builds a provider, a tool or a session writer: a replay reads the
//! session file and its event log (`session::events`) and only draws.

mod in_flight;
pub mod json;
pub mod log;
pub mod player;
mod run;
pub mod screen;
pub mod timeline;

pub use player::{PlayOptions, Player, SPEEDS};
pub use run::play_due;
pub use screen::{Control, Replay};
pub use timeline::{Step, Timeline};

use crate::cli::Mode;
use crate::config::Settings;
use crate::exit::{EXIT_OK, ExitFailure};
use crate::session;
use crate::tui::colors::Depth;
use crate::tui::terminal;
use color_eyre::eyre::{bail, eyre};
use std::path::PathBuf;
use std::sync::Arc;

/// What `claw-tui replay` was asked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayArgs {
    /// Session id, prefix or path; `None`: the workspace's latest.
    pub session: Option<String>,
    /// How it plays.
    pub options: PlayOptions,
    /// The turn to start at (from 1).
    pub from: Option<usize>,
    /// `Json` prints the events instead of playing them.
    pub mode: Option<Mode>,
}

/// Runs `claw-tui replay`; returns the exit code, or the error for `main` to report (a
/// usage error, or an [`ExitFailure`] with its own code).
pub fn run(args: &ReplayArgs, settings: &Settings) -> color_eyre::Result<i32> {
    let speed = args.options.speed;
    if !speed.is_finite() || !(0.25..=64.0).contains(&speed) {
        bail!("--speed must be between 0.25 and 64 (got {speed})");
    }
    let path = session_path(args.session.as_deref(), settings)?;
    match args.mode {
        Some(Mode::Json) => print_json(&path),
        Some(Mode::Rpc) => bail!("replay has no RPC mode; use --mode json for the events"),
        Some(Mode::Text) | None => play(&path, args, settings),
    }
}

/// Why there is no session to replay.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// The session asked for could not be found or read.
    #[error(transparent)]
    Session(#[from] session::SessionError),
    /// The workspace has none.
    #[error("no sessions in {workspace} yet: there is nothing to replay")]
    NoSessions {
        /// The workspace.
        workspace: String,
    },
}

fn session_path(key: Option<&str>, settings: &Settings) -> Result<PathBuf, FindError> {
    session::find_or_latest(&settings.data_dir, &settings.workspace, key)?.ok_or_else(|| {
        FindError::NoSessions {
            workspace: settings.workspace.display().to_string(),
        }
    })
}

fn print_json(path: &std::path::Path) -> color_eyre::Result<i32> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match json::print_events(path, &mut out) {
        Ok(notes) => {
            for note in notes {
                // A warning, not an error: the events were printed.
                eprintln!("claw-tui: warning: {note}");
            }
            Ok(EXIT_OK)
        }
        // The reader went away: nothing more to say.
        Err(json::JsonReplayError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(EXIT_OK)
        }
        Err(e) => Err(ExitFailure::run_failed(e.to_string()).into()),
    }
}

/// The client's configuration for a replay of `timeline`: the look and keys of
/// `settings`, and the session's provider and model. What the status bar says of them
/// follows the session, not the provider `settings` name now (a replay run without an
/// API key resolves to the offline demo): the cost is free only for a demo session, and
/// a configured context window or price applies only to the model it is configured for.
pub fn app_config(
    settings: &Settings,
    timeline: &Timeline,
) -> color_eyre::Result<crate::tui::AppConfig> {
    let (provider, model) = timeline.provider_and_model();
    let mut config = crate::tui::app_config(settings, model.clone())?;
    config.provider = provider;
    config.offline = model == crate::config::DEMO_MODEL;
    if settings.provider.model != model {
        config.context_window = None;
        config.priced_models.clear();
    }
    Ok(config)
}

/// Plays the session at `path` in the client until the user quits.
fn play(path: &std::path::Path, args: &ReplayArgs, settings: &Settings) -> color_eyre::Result<i32> {
    let timeline = Arc::new(Timeline::load(path)?);
    if let Some(turn) = args.from
        && (turn == 0 || turn > timeline.turn_count())
    {
        bail!(
            "--from {turn}: the session has {} turn(s)",
            timeline.turn_count()
        );
    }
    let config = app_config(settings, &timeline)?;
    crate::logging::init_file_logging(&settings.state_dir);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| eyre!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        // Before the terminal is taken: no signal may end the replay with the screen
        // left in its modes.
        let mut stop = crate::signals::StopSignals::install().map_err(|e| {
            ExitFailure::run_failed(format!("cannot take over the stop signals: {e}"))
        })?;
        terminal::install_panic_hook();
        let term = terminal::enter(config.mouse_capture)
            .and_then(|()| terminal::terminal(Depth::of_terminal(settings.file.ui.colors)));
        let mut term = match term {
            Ok(term) => term,
            Err(e) => {
                terminal::leave();
                bail!(
                    "cannot set up the terminal ({e}); `claw-tui replay ID --mode json` \
                     prints the events without one"
                );
            }
        };
        let size = term.size().map_or((80, 24), |s| (s.width, s.height));
        let now = tokio::time::Instant::now();
        let mut replay = Replay::new(timeline, config, args.options, size, now);
        if let Some(turn) = args.from {
            replay.seek_turn(turn, now);
        }
        let result = run::serve(&mut replay, &mut term, &mut stop).await;
        terminal::leave();
        match result {
            Ok(None) => Ok(EXIT_OK),
            // A replay records nothing: once the terminal is back, it is done.
            Ok(Some(code)) => Ok(code),
            Err(e) => Err(ExitFailure::run_failed(format!("the terminal failed: {e}")).into()),
        }
    })
}
