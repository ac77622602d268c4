//! Sessions in the client (model side): rebuilding the chat, the tool tree and the usage
//! totals from a loaded history, whether the session is being saved, opening the
//! `/sessions` picker, and the checks before a switch.

use super::App;
use crate::chat::CardInfo;
use crate::layout::Focus;
use crate::msg::Effect;
use crate::overlay::Overlay;
use crate::part::Handled;
use crate::recorded::Recorded;
use crate::sessions::{self, LoadedSession, SessionRow};
use claw_agent::{Block, Compaction, Message, NoticeLevel};
use std::path::PathBuf;
use std::sync::Arc;

impl App {
    /// What the runtime told about the sessions.
    pub(super) fn sessions_told(&mut self, msg: sessions::Msg) -> Handled {
        match msg {
            sessions::Msg::Loaded(loaded) => self.load_session(*loaded),
            sessions::Msg::List(rows) => self.show_sessions(rows),
            sessions::Msg::Choices(choices) => self.composer.set_sessions(choices),
            sessions::Msg::Locked { path, id } => {
                self.session.switching = false;
                self.overlays.replace(Overlay::ConfirmFork { path, id })
            }
            sessions::Msg::Failed(error) => {
                self.session.switching = false;
                self.chat.notice(NoticeLevel::Error, error.to_string())
            }
            sessions::Msg::Save(failure) => self.saving(failure),
        }
    }

    /// Replaces the conversation shown with `loaded`'s history.
    pub(super) fn load_session(&mut self, loaded: LoadedSession) -> Handled {
        self.session.switching = false;
        self.overlays.clear();
        // Saving trouble was the old file's; the new one's is reported after this.
        self.status.set_unsaved(None);
        self.session.id = loaded.id.clone();
        self.session.path = loaded.path.clone();
        if let Some(id) = &loaded.id {
            // What waited in it is delivered now.
            self.dashboard.opened(id);
        }
        let count = loaded.messages.len();
        let mut handled = self.show_history(loaded.messages, &loaded.compactions);
        for c in &loaded.compactions {
            self.status.add_cost(&c.usage);
        }
        if let Some(context) = loaded.context {
            self.status.set_context_tokens(context.tokens);
        }
        // Subagents' calls go under their spawn calls; the tree settles again after.
        for call in &loaded.nested {
            self.tools.restore_nested(call);
        }
        self.status.set_turn(self.tools.turn_count());
        self.tools.settle();
        for id in self.chat.card_ids() {
            handled.absorb(self.refresh_card(&id));
        }
        for note in loaded.notes {
            handled.absorb(self.chat.notice(NoticeLevel::Info, note));
        }
        let short = loaded.id.as_deref().map_or("", |id| &id[..id.len().min(8)]);
        let said = match (loaded.resumed, loaded.id.is_some()) {
            (true, _) => Some(format!("Resumed session {short}: {count} messages.")),
            // A copy: its note says where the messages come from.
            _ if loaded.quiet || count > 0 => None,
            (false, true) => Some(format!("New session {short}.")),
            (false, false) => Some(
                "New session: the conversation was cleared (nothing is recorded: --no-session)."
                    .to_owned(),
            ),
        };
        if let Some(text) = said {
            handled.absorb(self.chat.notice(NoticeLevel::Info, text));
        }
        if !loaded.queued.is_empty() {
            handled.absorb(self.chat.notice(
                NoticeLevel::Info,
                "Messages that were still queued are back in the composer.",
            ));
            handled.absorb(self.restore_to_composer(loaded.queued));
        }
        handled.with(Effect::Sessions(sessions::Effect::Ready))
    }

    /// Shows `messages` in place of the conversation shown: the chat (with a divider
    /// for each of `compactions` after the messages the history held then), the tool
    /// tree and the usage totals are rebuilt from them. The chat and the tree read the
    /// prompts, answers and results where `messages` holds them (the agent's own
    /// history): they keep no copy.
    pub(super) fn show_history(
        &mut self,
        messages: Arc<[Message]>,
        compactions: &[Compaction],
    ) -> Handled {
        self.clear_conversation();
        let mut handled = Handled::changed();
        let mut compactions = compactions.iter().peekable();
        for i in 0..messages.len() {
            while let Some(c) = compactions.next_if(|c| c.history_len <= i) {
                self.chat
                    .compacted(c.tokens_before, c.tokens_after, c.summary.clone());
            }
            if let Some(recorded) = Recorded::new(&messages, i) {
                handled.absorb(self.replay(recorded));
            }
        }
        for c in compactions {
            self.chat
                .compacted(c.tokens_before, c.tokens_after, c.summary.clone());
        }
        // Laid out from the newest entry up as the view reaches them: the last screen
        // shows at once however long the history is.
        self.chat.defer_history();
        self.status.set_turn(self.tools.turn_count());
        self.tools.settle();
        for id in self.chat.card_ids() {
            handled.absorb(self.refresh_card(&id));
        }
        handled
    }

    /// Saving the session failed (`Some(error)`: said in the chat, and the status bar
    /// shows it until saving works again) or works again (`None`).
    pub(super) fn saving(&mut self, failure: Option<String>) -> Handled {
        let text = match &failure {
            Some(error) => format!(
                "{error}. The conversation goes on; writing is retried at the end of each turn."
            ),
            None => "The session is saved again; nothing is missing from it.".to_owned(),
        };
        let level = if failure.is_some() {
            NoticeLevel::Error
        } else {
            NoticeLevel::Info
        };
        let bar = Handled::changed_if(self.status.set_unsaved(failure));
        bar.and(self.chat.notice(level, text))
    }

    /// Shows a recorded message as if it had just happened (no streaming, no timings),
    /// as a live `message_end` (and a result's `tool_execution_end`) would.
    fn replay(&mut self, recorded: Recorded) -> Handled {
        match recorded.message() {
            Message::Assistant(m) => {
                self.tools.turn_started();
                self.status.add_usage(&m.usage);
                let mut cards = Vec::new();
                // A failed answer's calls never ran: they get no node and no card.
                if !m.is_failed() {
                    for block in &m.content {
                        if let Block::ToolCall { id, name, args } = block {
                            self.tools.announce(id, name, args);
                            if let Some(node) = self.tools.node(id) {
                                let expanded = self.chat.is_expanded(id);
                                cards.push((id.clone(), CardInfo::of(node, expanded)));
                            }
                        }
                    }
                }
                self.chat.recorded(recorded, cards)
            }
            Message::ToolResult(_) => {
                self.tools.finish_recorded(recorded, self.now);
                Handled::changed()
            }
            Message::User(_) => self.chat.recorded(recorded, Vec::new()),
            // Notifications and notices: few and short, shown as live ones are.
            other => {
                let message = other.clone();
                self.message_end(message)
            }
        }
    }

    fn clear_conversation(&mut self) {
        self.chat.clear();
        self.tools.clear();
        self.highlights.forget_waiting();
        self.status.reset_totals();
    }

    /// The picker's list arrived.
    pub(super) fn show_sessions(&mut self, rows: Vec<SessionRow>) -> Handled {
        if rows.is_empty() {
            return self.chat.notice(
                NoticeLevel::Info,
                "There are no sessions in this workspace yet.",
            );
        }
        let selected = rows
            .iter()
            .position(|r| Some(&r.id) != self.session.id.as_ref())
            .unwrap_or(0);
        self.overlays.replace(Overlay::Sessions {
            rows,
            selected,
            query: String::new(),
        })
    }

    /// Switching while a run is active would tear its history apart: refused.
    pub(super) fn open_session(&mut self, path: PathBuf, fork: bool) -> Handled {
        self.switch_by(sessions::Effect::Open { path, fork })
    }

    /// Starts a switch to another session by `effect`, unless one is under way or a
    /// run is active.
    fn switch_by(&mut self, effect: sessions::Effect) -> Handled {
        if self.session.switching {
            return Handled::changed();
        }
        if self.status.running() {
            return self.chat.notice(
                NoticeLevel::Warning,
                "A run is active: wait for it to finish or interrupt it (Esc) before switching sessions.",
            );
        }
        self.focus = Focus::Composer;
        self.session.switching = true;
        Handled::changed().with(Effect::Sessions(effect))
    }

    /// `/sessions ID`: the session whose id starts with `prefix`, checked like any switch.
    pub(super) fn open_session_by_id(&mut self, prefix: &str) -> Handled {
        if self
            .session
            .id
            .as_deref()
            .is_some_and(|id| id.starts_with(prefix))
        {
            return self
                .chat
                .notice(NoticeLevel::Info, "That is the current session.");
        }
        self.switch_by(sessions::Effect::OpenById(prefix.to_owned()))
    }

    /// `/compact [focus]`: only while idle (a run compacts on its own when it must).
    pub(super) fn compact(&mut self, focus: Option<String>) -> Handled {
        if self.session.switching {
            return Handled::changed();
        }
        if self.status.running() {
            return self.chat.notice(
                NoticeLevel::Warning,
                "A run is active: /compact works once it has finished (Esc interrupts it); a run \
                 compacts on its own when the context window fills.",
            );
        }
        self.chat.follow();
        Handled::changed().with(Effect::Compact(focus))
    }

    /// `/retry`: the request that failed goes again (the agent continues from the
    /// history without the failed answer); only while idle after a failure.
    pub(super) fn retry(&mut self) -> Handled {
        if self.session.switching {
            return Handled::changed();
        }
        if self.status.running() {
            return self.chat.notice(
                NoticeLevel::Warning,
                "A run is active: it retries failed requests on its own (Esc stops it).",
            );
        }
        if !self.chat.ends_in_failure() {
            return self.chat.notice(
                NoticeLevel::Info,
                "Nothing to retry: the last answer did not fail. Send a message instead.",
            );
        }
        self.chat.follow();
        Handled::changed().with(Effect::Retry)
    }

    /// `/name NAME`: names the session shown (empty: removes its name).
    pub(super) fn name_session(&mut self, name: String) -> Handled {
        match self.session.path.clone() {
            Some(path) => {
                Handled::changed().with(Effect::Sessions(sessions::Effect::Name { path, name }))
            }
            None => self.chat.notice(
                NoticeLevel::Info,
                "Sessions are off in this run (--no-session): there is nothing to name.",
            ),
        }
    }

    /// `/new`, refused while a run is active like any switch.
    pub(super) fn new_session(&mut self) -> Handled {
        if self.session.switching {
            return Handled::changed();
        }
        if self.status.running() {
            return self.chat.notice(
                NoticeLevel::Warning,
                "A run is active: wait for it to finish or interrupt it (Esc) before starting a new session.",
            );
        }
        self.session.switching = true;
        Handled::changed().with(Effect::Sessions(sessions::Effect::New))
    }
}
