//! Long sessions: context accounting, compaction at the threshold, overflow recovery,
//! cancelling, resuming a compacted session and subagents, against the fake server with
//! an 8,000-token window.

mod advice;
mod cancel;
mod chunks;
mod overflow;
mod resume;
mod rpc;
mod steering;
mod subagent;
mod threshold;
