//! Tests of the agent area.

mod abort;
mod continue_run;
mod events;
mod follow_up;
mod hooks;
mod interrupt_tools;
mod pipeline;
mod replay;
mod steering;
mod subscriptions;
mod tool_errors;
mod tools;
mod turn_limit;
