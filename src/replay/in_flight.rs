//! Which recorded request a replay position was waiting on: the inspector opened from
//! a replay starts there.

use super::timeline::Timeline;

/// The request (its position in the log) in flight after the first `position` steps:
/// of the requests of the turn shown, the latest sent by then (the turn's first when the
/// log dates it a little after the event that opened the turn, as the event is stamped
/// when the recorder takes it); in a turn that sent none, the latest sent before it.
/// `None` before any request.
pub fn request_at(timeline: &Timeline, position: usize) -> Option<usize> {
    let log = &timeline.requests;
    let (turn, now_ms) = match position.checked_sub(1) {
        Some(last) => (timeline.turn_of(last), Some(timeline.wall_ms(last))),
        None => (timeline.before, None),
    };
    let turn = u32::try_from(turn).unwrap_or(u32::MAX);
    let in_turn = log.in_turn(turn);
    if let Some(&first) = in_turn.first() {
        let sent_by_now = in_turn
            .iter()
            .rev()
            .find(|&&n| now_ms.is_some_and(|now| log.requests[n].sent.time_ms <= now));
        return Some(sent_by_now.copied().unwrap_or(first));
    }
    (0..log.len())
        .rev()
        .find(|&n| log.requests[n].sent.turn < turn)
}
