#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! The inbound bus: delivery to a subscriber, queueing without one, draining, and
//! exactly-once delivery when subscribing races publishing.

use claw_tui::runtime::{InboundMessage, MessageBus, SYSTEM_CHANNEL};
use std::collections::HashSet;

fn msg(channel: &str, content: &str) -> InboundMessage {
    InboundMessage::new(channel, "test", "direct", content)
}

fn contents(messages: &[InboundMessage]) -> Vec<String> {
    messages.iter().map(|m| m.content.clone()).collect()
}

#[test]
fn without_a_subscriber_messages_wait_until_drained_in_order() {
    let bus = MessageBus::new();
    bus.publish(msg(SYSTEM_CHANNEL, "one"));
    bus.publish(msg(SYSTEM_CHANNEL, "two"));
    bus.publish(msg("other", "elsewhere"));
    assert_eq!(bus.backlog_len(SYSTEM_CHANNEL), 2);
    assert!(!bus.has_subscriber(SYSTEM_CHANNEL));

    let drained = bus.drain(SYSTEM_CHANNEL);
    assert_eq!(contents(&drained), ["one", "two"]);
    assert_eq!(drained[0].channel, SYSTEM_CHANNEL);
    assert_eq!(drained[0].sender_id, "test");
    assert_eq!(drained[0].chat_id, "direct");
    assert!(drained[0].timestamp > 0);
    // Delivered once: a second drain finds nothing; other channels are untouched.
    assert!(bus.drain(SYSTEM_CHANNEL).is_empty());
    assert_eq!(contents(&bus.drain("other")), ["elsewhere"]);
    assert!(bus.drain("never-used").is_empty());
}

#[tokio::test]
async fn a_subscriber_receives_messages_and_nothing_is_queued() {
    let bus = MessageBus::new();
    let mut rx = bus.subscribe(SYSTEM_CHANNEL);
    assert!(bus.has_subscriber(SYSTEM_CHANNEL));
    bus.publish(msg(SYSTEM_CHANNEL, "a"));
    bus.publish(msg(SYSTEM_CHANNEL, "b"));
    assert_eq!(rx.recv().await.unwrap().content, "a");
    assert_eq!(rx.recv().await.unwrap().content, "b");
    assert!(bus.drain(SYSTEM_CHANNEL).is_empty());
    assert_eq!(bus.backlog_len(SYSTEM_CHANNEL), 0);
    // A message on another channel does not reach this subscriber.
    bus.publish(msg("other", "x"));
    assert!(rx.try_recv().is_err());
    assert_eq!(bus.backlog_len("other"), 1);
}

#[tokio::test]
async fn a_late_subscriber_gets_the_backlog_first_then_new_messages() {
    let bus = MessageBus::new();
    bus.publish(msg(SYSTEM_CHANNEL, "early-1"));
    bus.publish(msg(SYSTEM_CHANNEL, "early-2"));
    let mut rx = bus.subscribe(SYSTEM_CHANNEL);
    bus.publish(msg(SYSTEM_CHANNEL, "late"));
    let mut got = Vec::new();
    while let Ok(m) = rx.try_recv() {
        got.push(m.content);
    }
    assert_eq!(got, ["early-1", "early-2", "late"]);
    assert!(bus.drain(SYSTEM_CHANNEL).is_empty());
}

#[tokio::test]
async fn messages_for_a_departed_subscriber_wait_for_the_next_one() {
    let bus = MessageBus::new();
    let rx = bus.subscribe(SYSTEM_CHANNEL);
    drop(rx);
    assert!(!bus.has_subscriber(SYSTEM_CHANNEL));
    bus.publish(msg(SYSTEM_CHANNEL, "kept"));
    assert_eq!(bus.backlog_len(SYSTEM_CHANNEL), 1);
    let mut rx = bus.subscribe(SYSTEM_CHANNEL);
    assert_eq!(rx.recv().await.unwrap().content, "kept");

    bus.unsubscribe(SYSTEM_CHANNEL);
    bus.publish(msg(SYSTEM_CHANNEL, "after unsubscribe"));
    assert!(rx.try_recv().is_err());
    assert_eq!(contents(&bus.drain(SYSTEM_CHANNEL)), ["after unsubscribe"]);
}

#[tokio::test]
async fn a_new_subscriber_replaces_the_old_one() {
    let bus = MessageBus::new();
    let mut first = bus.subscribe(SYSTEM_CHANNEL);
    bus.publish(msg(SYSTEM_CHANNEL, "to first"));
    let mut second = bus.subscribe(SYSTEM_CHANNEL);
    bus.publish(msg(SYSTEM_CHANNEL, "to second"));
    assert_eq!(first.recv().await.unwrap().content, "to first");
    // The old receiver's sender is gone, so it ends after what it already got.
    assert!(first.recv().await.is_none());
    assert_eq!(second.recv().await.unwrap().content, "to second");
}

#[test]
fn every_message_is_delivered_exactly_once_while_subscribing_races_publishing() {
    const PRODUCERS: usize = 4;
    const EACH: usize = 2_000;
    let bus = MessageBus::new();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let bus = bus.clone();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    bus.publish(msg(SYSTEM_CHANNEL, &format!("{p}:{i}")));
                }
            })
        })
        .collect();
    // Subscribe, drop, drain and subscribe again while the producers run.
    let early = bus.subscribe(SYSTEM_CHANNEL);
    let mut got: Vec<String> = Vec::new();
    let mut early = early;
    while let Ok(m) = early.try_recv() {
        got.push(m.content);
    }
    bus.unsubscribe(SYSTEM_CHANNEL);
    while let Ok(m) = early.try_recv() {
        got.push(m.content);
    }
    got.extend(contents(&bus.drain(SYSTEM_CHANNEL)));
    let mut late = bus.subscribe(SYSTEM_CHANNEL);
    for producer in producers {
        producer.join().unwrap();
    }
    while let Ok(m) = late.try_recv() {
        got.push(m.content);
    }
    got.extend(contents(&bus.drain(SYSTEM_CHANNEL)));

    assert_eq!(got.len(), PRODUCERS * EACH, "lost or duplicated messages");
    let unique: HashSet<&String> = got.iter().collect();
    assert_eq!(unique.len(), PRODUCERS * EACH);
    // Each producer's messages keep their publication order.
    for p in 0..PRODUCERS {
        let prefix = format!("{p}:");
        let seq: Vec<usize> = got
            .iter()
            .filter_map(|c| c.strip_prefix(&prefix))
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(seq, (0..EACH).collect::<Vec<_>>(), "producer {p} reordered");
    }
}
