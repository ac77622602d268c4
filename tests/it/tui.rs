//! Tests of the tui area.

mod attach;
mod compaction;
mod e2e;
mod e2e_cache;
mod e2e_compaction;
mod e2e_llm;
mod e2e_sessions;
mod e2e_terminal_loss;
mod e2e_ux;
mod events;
mod keys_config;
mod model_list;
mod saving;
mod sessions;
mod snapshots;
mod subagent_approval;
mod update;
mod update_commands;
mod ux_background;
mod ux_cards;
mod ux_markdown;
mod ux_nav;
mod ux_shell;
mod ux_status;
mod ux_steer;
