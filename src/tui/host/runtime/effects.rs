//! The executor of the client's effects: each `Effect` the app asks for becomes a call
//! on the supervisor, the agent, the sessions or the background runtime, or a task off
//! the UI thread whose answer comes back through the inbox.

use super::{Handover, Runtime};
use crate::agent::{NoticeLevel, QueueKind, UserMessage};
use crate::runtime::context::mention::attach_skills;
use crate::runtime::supervisor::UserInput;

use crate::theme::Theme;
use crate::tui::background::{BackgroundAction, BackgroundError, BackgroundFailure};
use crate::tui::host::attach;
use crate::tui::host::background::Background;
use crate::tui::host::export_file::export_html;
use crate::tui::host::history;
use crate::tui::host::terminal::{self, Term};
use crate::tui::msg::{Effect, Msg, QueuedText};
use crate::tui::subagents;

impl Runtime {
    /// Runs a dashboard action on a blocking thread; a failure comes back as a notice.
    fn background(
        &mut self,
        action: BackgroundAction,
        act: impl FnOnce(&dyn Background) -> Result<(), BackgroundError> + Send + 'static,
    ) {
        let background = self.background.clone();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(error) = act(background.as_ref()) {
                let _ = tx.send(Msg::BackgroundFailed(BackgroundFailure { action, error }));
            }
        });
    }

    /// Carries out one effect.
    pub fn execute(&mut self, effect: Effect, term: &mut Term) {
        let agent = self.agent.clone();
        match effect {
            // The supervisor runs the prompt hooks, then decides between a run and a
            // follow-up under its own lock.
            Effect::Prompt(text) | Effect::FollowUp(text) => {
                self.deliver(UserInput::Submit(UserMessage::new(text)));
            }
            Effect::AttachSkills { text, skills } => {
                let workspace = self.workspace.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let result = attach_skills(&workspace, &text, &skills);
                    let _ = tx.send(Msg::SkillsAttached { text, result });
                });
            }
            Effect::ExportHtml {
                session,
                code_theme,
            } => {
                let (data_dir, workspace) = (self.data_dir.clone(), self.workspace.clone());
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let said = match export_html(&data_dir, &workspace, session, &code_theme) {
                        Ok(exported) => {
                            for warning in exported.warnings {
                                let _ = tx.send(Msg::Notice(NoticeLevel::Warning, warning));
                            }
                            Msg::Notice(
                                NoticeLevel::Info,
                                format!("Exported the session to {}", exported.path.display()),
                            )
                        }
                        Err(e) => Msg::Notice(NoticeLevel::Error, format!("cannot export: {e}")),
                    };
                    let _ = tx.send(said);
                });
            }
            Effect::LoadImages { text, paths } => {
                let workspace = self.workspace.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let result = attach::load_all(&workspace, &paths);
                    let _ = tx.send(Msg::ImagesLoaded { text, result });
                });
            }
            Effect::PromptMessage(message) => self.deliver(UserInput::Submit(message)),
            Effect::Steer(text) => self.deliver(UserInput::Steer(text)),
            Effect::Abort => self.abort(),
            Effect::InterruptTools => {
                agent.interrupt_tools();
            }
            Effect::RestoreQueued => {
                // Steering first: it would have gone in first.
                let mut texts = Vec::new();
                for kind in [QueueKind::Steering, QueueKind::FollowUp] {
                    texts.extend(agent.clear_queue(Some(kind)).iter().map(|m| QueuedText {
                        kind,
                        text: m.preview_text(),
                    }));
                }
                self.pending.push_back(Msg::QueueRestored(texts));
            }
            Effect::Quit => self.quit = true,
            Effect::Suspend => self.handover = Some(Handover::Suspend),
            Effect::OpenEditor(text) => self.handover = Some(Handover::Editor(text)),
            Effect::SaveHistory(text) => {
                let dir = self.data_dir.clone();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = history::append(&dir, &text) {
                        tracing::warn!("cannot save the history: {e}");
                    }
                });
            }
            Effect::ListFiles => {
                let root = self.workspace.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(Msg::WorkspaceFiles(history::list_files(&root)));
                });
            }
            Effect::ListModels => {
                crate::tui::host::model_list::fetch(self.agent.provider(), self.tx.clone());
            }
            Effect::Highlight(request) => self.highlighter.request(request, &self.tx),
            Effect::Copy(text) => {
                let in_tmux = crate::tui::host::clipboard::in_tmux();
                match self.clipboard.copy(term.backend_mut(), &text, in_tmux) {
                    Ok(hint) => self
                        .pending
                        .extend(hint.map(|hint| Msg::Notice(NoticeLevel::Info, hint.to_owned()))),
                    Err(e) => self
                        .pending
                        .push_back(Msg::Notice(NoticeLevel::Error, format!("cannot copy: {e}"))),
                }
            }
            Effect::SetModel(name) => agent.set_model(name),
            Effect::SetThinking(level) => agent.set_thinking_level(level),
            Effect::SetQueueMode(kind, mode) => agent.set_queue_mode(kind, mode),
            Effect::SetToolExecution(mode) => agent.set_tool_execution(mode),
            Effect::Shell(effect) => self.shells.run(&self.policy, effect, &self.tx),
            Effect::SetTheme(name) => {
                let dir = self.theme_dir.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let loaded = Theme::load(&name, dir.as_deref());
                    let no_color =
                        crate::theme::no_color_requested(std::env::var("NO_COLOR").ok().as_deref());
                    let loaded = loaded.map(|t| if no_color { t.without_color() } else { t });
                    let _ = tx.send(Msg::ThemeLoaded(loaded.map(Box::new)));
                });
            }
            Effect::SaveSettings { path, settings } => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let keys = settings.iter().map(|s| s.key.clone()).collect();
                    let outcome = crate::config::save::save_settings(&path, &settings)
                        .map(|()| keys)
                        .map_err(|e| e.to_string());
                    let _ = tx.send(Msg::SettingsSaved(outcome));
                });
            }
            Effect::Retry => {
                if let Err(e) = self.supervisor.retry() {
                    let why = format!("Cannot retry: {e}");
                    self.pending
                        .push_back(Msg::Notice(NoticeLevel::Warning, why));
                }
            }
            Effect::Compact(focus) => {
                if let Err(e) = self.supervisor.compact(focus) {
                    let why = format!("Cannot compact now: {e}");
                    self.pending
                        .push_back(Msg::Notice(NoticeLevel::Warning, why));
                }
            }
            Effect::Sessions(effect) => self.sessions.run(effect),
            Effect::Inspector(effect) => {
                crate::tui::host::inspector::run(self.sessions.request_tap(), effect, &self.tx)
            }
            Effect::Approve { id, decision } => self.approvals.resolve(&id, decision),
            Effect::Subagents(subagents::Effect::Cancel(id)) => self
                .background(BackgroundAction::CancelSubagent, move |b| {
                    b.cancel_subagent(&id)
                }),
            Effect::PauseCron(id) => {
                self.background(BackgroundAction::PauseCron, move |b| b.pause_cron(&id))
            }
            Effect::ResumeCron(id) => {
                self.background(BackgroundAction::ResumeCron, move |b| b.resume_cron(&id))
            }
            Effect::AnswerTrust { trusted, request } => self
                .background(BackgroundAction::AnswerTrust, move |b| {
                    b.answer_trust(trusted, &request)
                }),
            Effect::DeleteCron(id) => {
                self.background(BackgroundAction::DeleteCron, move |b| b.delete_cron(&id))
            }
            Effect::SetMouseCapture(on) => {
                if let Err(e) = terminal::set_mouse(on) {
                    tracing::warn!("cannot change mouse capture: {e}");
                }
            }
            effect @ Effect::SetMode(_) => {
                crate::tui::host::control::execute(&self.controls, effect)
            }
            Effect::Checkpoints(effect) => {
                crate::tui::host::checkpoints::run(&self.controls.checkpoints, effect, &self.tx)
            }
        }
    }

    /// Sends what the user typed through the supervisor's intake (the prompt hooks
    /// first, in order); a blocked input comes back as `Msg::PromptBlocked`.
    fn deliver(&self, input: UserInput) {
        let delivery = self.supervisor.deliver(input);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Err(blocked) = delivery.await {
                let _ = tx.send(Msg::PromptBlocked {
                    text: blocked.text,
                    reason: blocked.reason,
                });
            }
        });
    }

    /// Aborts the active run (through the supervisor, which then starts nothing on its
    /// own until the next input).
    pub fn abort(&self) {
        self.supervisor.abort();
    }
}
