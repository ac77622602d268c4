//! Enter and the slash commands: what the composer's text becomes.

use super::App;
use crate::attach::{self, AttachError};
use crate::checkpoints;
use crate::diff;
use crate::highlight::highlight_key;
use crate::msg::{Effect, HighlightRequest, QueuedText};
use crate::overlay::Overlay;
use crate::part::HINT;
use crate::part::Handled;
use crate::sessions;
use crate::slash::{self, Command, SlashError};
use claw_agent::{ImageData, NoticeLevel, QueueKind, UserMessage};
use claw_tools::fs::FileChange;

impl App {
    /// Enter: a command runs; a prompt starts a run, or queues a follow-up while running;
    /// `!cmd` runs a shell command; messages restored from the queues and not edited go
    /// back as they were.
    pub(super) fn submit(&mut self) -> Handled {
        if self.composer.is_blank() {
            return self.offer_plan();
        }
        if !self.session.switching
            && let Some(items) = self.composer.take_restored()
        {
            return self.resend(items);
        }
        let text = self.composer.take();
        let mut handled = Handled::changed();
        if self.composer.remember(&text) {
            handled = handled.with(Effect::SaveHistory(text.clone()));
        }
        // A built-in command wins over a command file of the same name.
        if !text.starts_with(' ')
            && !self.is_custom_command(&text)
            && let Some(command) = slash::parse(&text)
        {
            return handled.and(self.command(command));
        }
        if let Some(command) = text.strip_prefix('!') {
            let (command, keep) = match command.strip_prefix('!') {
                Some(rest) => (rest, false),
                None => (command, true),
            };
            return handled.and(self.shell(command.trim(), keep));
        }
        if self.session.switching {
            // The history is being replaced: the text waits until the session is shown.
            self.composer.set_text(&text);
            return handled
                .and(self.hint("switching sessions… press Enter again in a moment", HINT));
        }
        if !text.starts_with(' ')
            && let Some(prompt) = self.custom_command_prompt(&text)
        {
            return handled.and(self.send_with_mentions(prompt));
        }
        // A leading space lets a message start with `/` without being a command.
        let text = match text.strip_prefix(' ') {
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => text,
        };
        handled.and(self.send_with_mentions(text))
    }

    /// Sends a message: a run, or a follow-up while one is running.
    pub(super) fn send_text(&mut self, text: String) -> Handled {
        let typed = text.clone();
        self.send_message(&typed, text)
    }

    /// Sends `message`, made from what the user `typed` (attached skill files do not
    /// count as image mentions).
    pub(super) fn send_message(&mut self, typed: &str, text: String) -> Handled {
        let handled = Handled::changed();
        self.chat.follow();
        self.plan_ready = false;
        // Mentions are the user's own words, not the shell output or skill files sent
        // along.
        let paths = attach::mentions(typed);
        let text = self.shells.with_context(text);
        if !paths.is_empty() {
            // The files are read on the runtime side; the message goes once they are.
            return handled.with(Effect::LoadImages { text, paths });
        }
        handled.with(if self.status.running() {
            Effect::FollowUp(text)
        } else {
            Effect::Prompt(text)
        })
    }

    /// Sends messages restored from the queues as they were: the first as a prompt (or
    /// a follow-up while running), then each steer as a steer and each follow-up as a
    /// follow-up.
    fn resend(&mut self, items: Vec<QueuedText>) -> Handled {
        self.chat.follow();
        let mut handled = Handled::changed();
        for (i, item) in items.into_iter().enumerate() {
            let text = if i == 0 {
                self.shells.with_context(item.text)
            } else {
                item.text
            };
            let effect = match (i, item.kind, self.status.running()) {
                (0, _, false) => Effect::Prompt(text),
                (_, QueueKind::Steering, _) => Effect::Steer(text),
                (_, QueueKind::FollowUp, _) => Effect::FollowUp(text),
            };
            handled = handled.with(effect);
        }
        handled
    }

    /// The images of a message were read: it is sent with them. When one could not be
    /// read, the text goes back to the composer (nothing is lost) with the reason.
    pub(super) fn images_loaded(
        &mut self,
        text: String,
        result: Result<Vec<ImageData>, AttachError>,
    ) -> Handled {
        match result {
            Ok(images) => Handled::changed().with(Effect::PromptMessage(
                UserMessage::new(text).with_images(images),
            )),
            Err(why) => {
                self.composer.put_back(text);
                self.chat.notice(NoticeLevel::Error, why.to_string())
            }
        }
    }

    fn command(&mut self, command: Result<Command, SlashError>) -> Handled {
        let command = match command {
            Ok(c) => c,
            Err(why) => return self.chat.notice(NoticeLevel::Warning, why.to_string()),
        };
        match command {
            Command::Help => self.overlays.push(Overlay::Help { scroll: 0 }),
            Command::Mcp => self.overlays.push(Overlay::Mcp { scroll: 0 }),
            Command::Inspect => Handled::changed().with(super::inspect_requests(None)),
            Command::Model(name) => {
                let said = self.chat.notice(
                    NoticeLevel::Info,
                    format!("Model set to {name} from the next run on."),
                );
                self.status.set_model(name.clone());
                self.composer.set_current_model(name.clone());
                said.with(Effect::SetModel(name))
            }
            Command::Thinking(level) => {
                self.status.set_thinking(level);
                self.chat
                    .notice(
                        NoticeLevel::Info,
                        format!(
                            "Thinking set to {} from the next run on.",
                            format!("{level:?}").to_lowercase()
                        ),
                    )
                    .with(Effect::SetThinking(level))
            }
            Command::Steering(mode) => {
                self.status.set_queue_mode(QueueKind::Steering, mode);
                Handled::changed().with(Effect::SetQueueMode(QueueKind::Steering, mode))
            }
            Command::FollowUp(mode) => {
                self.status.set_queue_mode(QueueKind::FollowUp, mode);
                Handled::changed().with(Effect::SetQueueMode(QueueKind::FollowUp, mode))
            }
            Command::Tools(mode) => {
                self.status.set_tool_execution(mode);
                self.chat
                    .notice(
                        NoticeLevel::Info,
                        format!(
                            "Tool calls run {} from the next run on.",
                            format!("{mode:?}").to_lowercase()
                        ),
                    )
                    .with(Effect::SetToolExecution(mode))
            }
            Command::Copy { code } => {
                let answer = self.chat.last_answer();
                let text = if code {
                    answer.as_deref().and_then(last_code_block)
                } else {
                    answer
                };
                match text {
                    Some(text) => self
                        .hint("sent to the clipboard (OSC 52)", HINT)
                        .with(Effect::Copy(text)),
                    None => {
                        let what = if code { "code block" } else { "answer" };
                        self.chat.notice(
                            NoticeLevel::Warning,
                            format!("There is no {what} to copy yet."),
                        )
                    }
                }
            }
            Command::Theme(name) => Handled::changed().with(Effect::SetTheme(name)),
            Command::Status => self.overlays.push(Overlay::Status { scroll: 0 }),
            Command::Compact(focus) => self.compact(focus),
            Command::Retry => self.retry(),
            Command::Name(name) => self.name_session(name),
            Command::Settings => self.open_settings(),
            Command::Skills => self.list_skills(),
            Command::Export => Handled::changed().with(Effect::ExportHtml {
                session: self.session.id.clone(),
                code_theme: self.theme.syntax_theme.clone(),
            }),
            Command::Plan => self.cycle_mode(),
            Command::Undo => self.undo(),
            Command::Rewind => self.open_rewind(),
            Command::Diff => {
                Handled::changed().with(Effect::Checkpoints(checkpoints::Effect::Diff))
            }
            Command::New => self.new_session(),
            Command::Sessions(None) => {
                Handled::changed().with(Effect::Sessions(sessions::Effect::List))
            }
            Command::Sessions(Some(prefix)) => self.open_session_by_id(&prefix),
            Command::Quit => Handled::changed().with(Effect::Quit),
        }
    }

    /// Opens the arguments and result of the call `call_id`, and asks for its arguments
    /// to be highlighted.
    pub(super) fn open_detail(&mut self, call_id: String) -> Handled {
        let Some(node) = self.tools.node(&call_id) else {
            return Handled::unchanged();
        };
        let args = node.pretty_args();
        let change = node
            .result
            .as_ref()
            .and_then(|r| FileChange::from_details(r.details()));
        let mut opened = self.overlays.push(Overlay::Detail { call_id, scroll: 0 });
        let theme = &self.theme.syntax_theme;
        if theme.is_empty() {
            return opened;
        }
        let request = HighlightRequest {
            key: highlight_key(theme, "json", &args),
            lang: "json".into(),
            code: args,
            theme: theme.clone(),
        };
        let diff = change.and_then(|c| diff::highlight_request(&c, &self.theme));
        for request in std::iter::once(request).chain(diff) {
            if let Some(effect) = self.highlights.request(request) {
                opened = opened.with(effect);
            }
        }
        opened
    }
}

/// The last fenced code block of a markdown text.
fn last_code_block(markdown: &str) -> Option<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut last = None;
    let mut current: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(c) = &mut current {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => last = current.take(),
            _ => {}
        }
    }
    last.map(|c| c.trim_end_matches('\n').to_owned())
}
