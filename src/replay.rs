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
use crate::exit::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::session;
use crate::tui::terminal;
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

/// Runs `claw-tui replay`; returns the exit code.
pub fn run(args: &ReplayArgs, settings: &Settings) -> i32 {
    let speed = args.options.speed;
    if !speed.is_finite() || !(0.25..=64.0).contains(&speed) {
        eprintln!("claw-tui: --speed must be between 0.25 and 64 (got {speed})");
        return EXIT_USAGE;
    }
    let path = match session_path(args.session.as_deref(), settings) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    match args.mode {
        Some(Mode::Json) => print_json(&path),
        Some(Mode::Rpc) => {
            eprintln!("claw-tui: replay has no RPC mode; use --mode json for the events");
            EXIT_USAGE
        }
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

fn print_json(path: &std::path::Path) -> i32 {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match json::print_events(path, &mut out) {
        Ok(notes) => {
            for note in notes {
                eprintln!("claw-tui: warning: {note}");
            }
            EXIT_OK
        }
        // The reader went away: nothing more to say.
        Err(json::JsonReplayError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            EXIT_RUN_FAILED
        }
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
fn play(path: &std::path::Path, args: &ReplayArgs, settings: &Settings) -> i32 {
    let timeline = match Timeline::load(path) {
        Ok(timeline) => Arc::new(timeline),
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    if let Some(turn) = args.from
        && (turn == 0 || turn > timeline.turn_count())
    {
        eprintln!(
            "claw-tui: --from {turn}: the session has {} turn(s)",
            timeline.turn_count()
        );
        return EXIT_USAGE;
    }
    let config = match app_config(settings, &timeline) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("claw-tui: {e}");
            return EXIT_USAGE;
        }
    };
    crate::logging::init_file_logging(&settings.state_dir);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("claw-tui: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    runtime.block_on(async {
        // Before the terminal is taken: no signal may end the replay with the screen
        // left in its modes.
        let mut stop = match crate::signals::StopSignals::install() {
            Ok(stop) => stop,
            Err(e) => {
                eprintln!("claw-tui: cannot take over the stop signals: {e}");
                return EXIT_RUN_FAILED;
            }
        };
        terminal::install_panic_hook();
        let term = terminal::enter(config.mouse_capture).and_then(|()| terminal::terminal());
        let mut term = match term {
            Ok(term) => term,
            Err(e) => {
                terminal::leave();
                eprintln!(
                    "claw-tui: cannot set up the terminal ({e}); `claw-tui replay ID --mode \
                     json` prints the events without one"
                );
                return EXIT_USAGE;
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
            Ok(None) => EXIT_OK,
            // A replay records nothing: once the terminal is back, it is done.
            Ok(Some(code)) => code,
            Err(e) => {
                terminal::tell(&format!("claw-tui: the terminal failed: {e}"));
                EXIT_RUN_FAILED
            }
        }
    })
}
