//! The background runtime around the main agent: the inbound [`bus`], background
//! [`subagents`], scheduled [`cron`] jobs, the [`supervisor`] that serialises everything
//! reaching the main agent, the system-prompt [`context`] and plan [`mode`].
//!
//! Background work never touches the main agent's history directly: it publishes on the
//! bus's [`bus::SYSTEM_CHANNEL`], and the supervisor delivers it as a notification when
//! the main agent is free. What the UI should show about it (subagent events, status
//! changes, pending notifications) travels as [`RuntimeEvent`]s on their own channel,
//! so it never mixes into the main run's event sequence.

pub mod bus;
pub mod context;
pub mod cron;
pub mod event;
pub mod mcp_state;
pub mod mode;
pub mod subagents;
pub mod supervisor;

pub use bus::{InboundMessage, MessageBus, SYSTEM_CHANNEL};
pub use context::build_system_prompt;
pub use event::{RuntimeEvent, RuntimeEventSender, runtime_channel};
pub use mode::{AgentMode, ModeSwitch};
pub use subagents::{
    SpawnReceipt, SubagentConfig, SubagentError, SubagentInfo, SubagentManager, SubagentStatus,
};
pub use supervisor::{
    NOTIFICATION_PREFIX, NotificationStore, Supervisor, SupervisorInput, SupervisorOutcome,
    SwitchHold,
};
