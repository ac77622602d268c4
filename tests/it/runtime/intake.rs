#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The supervisor's one intake: every input a front-end delivers passes the prompt
//! filter, one at a time in the order it was sent, before the supervisor decides; a
//! blocked one comes back with its text, and the agent never sees it.

use crate::support::gating::held;
use crate::support::runs::user_texts;
use crate::support::{Reply, ScriptedProvider, until_agent_end};
use async_trait::async_trait;
use claw_tui::agent::{Agent, EventKind, UserMessage};
use claw_tui::runtime::supervisor::{PromptBlocked, PromptDecision, PromptFilter, UserInput};
use claw_tui::runtime::{MessageBus, Supervisor, SupervisorOutcome, runtime_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Adds context to every text, blocks those that say "forbidden", and takes its time
/// over the text "slow" (so a later input would overtake it if order were not kept).
#[derive(Default)]
struct Filter {
    seen: Mutex<Vec<String>>,
}

#[async_trait]
impl PromptFilter for Filter {
    async fn filter(&self, text: &str) -> PromptDecision {
        self.seen.lock().unwrap().push(text.to_owned());
        if text == "slow" {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if text.contains("forbidden") {
            PromptDecision::Block(format!("{text:?} is not allowed"))
        } else {
            PromptDecision::Send(format!("{text}\n\n(context)"))
        }
    }
}

fn message(text: &str) -> UserInput {
    UserInput::Submit(UserMessage::new(text))
}

#[tokio::test]
async fn inputs_pass_the_filter_in_the_order_sent_and_a_blocked_one_never_reaches_the_agent() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        held(Reply::text(&["first answer"]), &gate),
        Reply::text(&["second answer"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let (tx, _runtime_events) = runtime_channel();
    let supervisor = Supervisor::start(agent, &MessageBus::new(), tx).unwrap();
    let filter = Arc::new(Filter::default());
    supervisor.set_prompt_filter(filter.clone());

    // Sent in one go: each takes its place in line when it is sent.
    let slow = supervisor.deliver(message("slow"));
    let forbidden = supervisor.deliver(message("a forbidden wish"));
    let later = supervisor.deliver(message("later"));
    assert_eq!(slow.await, Ok(SupervisorOutcome::Started));
    assert_eq!(
        forbidden.await,
        Err(PromptBlocked {
            text: "a forbidden wish".into(),
            reason: "\"a forbidden wish\" is not allowed".into(),
        })
    );
    assert_eq!(later.await, Ok(SupervisorOutcome::QueuedFollowUp));
    assert_eq!(
        *filter.seen.lock().unwrap(),
        ["slow", "a forbidden wish", "later"]
    );

    gate.notify_one();
    // The follow-up goes in when the run would stop: one run, two requests.
    until_agent_end(&mut ends).await;
    let requests = provider.requests();
    assert_eq!(user_texts(&requests[0]), ["slow\n\n(context)"]);
    assert_eq!(
        user_texts(&requests[1]),
        ["slow\n\n(context)", "later\n\n(context)"],
        "the blocked text never reached the agent"
    );
}

#[tokio::test]
async fn steering_and_follow_ups_pass_the_filter_too() {
    let gate = Arc::new(Notify::new());
    let provider = ScriptedProvider::new(vec![
        held(Reply::text(&["working"]), &gate),
        Reply::text(&["steered"]),
    ]);
    let agent = Agent::new(provider.clone(), "scripted");
    let mut ends = agent.subscribe(Some(&[EventKind::AgentEnd]));
    let (tx, _runtime_events) = runtime_channel();
    let supervisor = Supervisor::start(agent.clone(), &MessageBus::new(), tx).unwrap();
    supervisor.set_prompt_filter(Arc::new(Filter::default()));

    let start = supervisor.deliver(message("start"));
    assert_eq!(start.await, Ok(SupervisorOutcome::Started));
    let blocked = supervisor.deliver(UserInput::Steer("forbidden turn".into()));
    assert!(blocked.await.is_err());
    let follow_up = supervisor.deliver(UserInput::FollowUp("afterwards".into()));
    assert_eq!(follow_up.await, Ok(SupervisorOutcome::QueuedFollowUp));
    let steer = supervisor.deliver(UserInput::Steer("turn left".into()));
    assert_eq!(steer.await, Ok(SupervisorOutcome::QueuedSteering));
    gate.notify_one();
    until_agent_end(&mut ends).await;
    let texts: Vec<String> = provider.requests().iter().flat_map(user_texts).collect();
    assert!(
        texts.iter().any(|t| t == "turn left\n\n(context)"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "afterwards\n\n(context)"),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("forbidden")), "{texts:?}");
}
