//! Tests of the tui area.

mod attach;
mod compaction;
mod e2e;
mod e2e_cache;
mod e2e_compaction;
mod e2e_llm;
mod e2e_sessions;
mod e2e_terminal_loss;
mod e2e_user_files;
mod events;
mod keys_config;
mod model_list;
mod saving;
mod sessions;
mod snapshots;
mod subagent_approval;
mod update;
mod update_commands;
mod user_files;
