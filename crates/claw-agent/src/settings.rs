//! The agent's settings for the next run (model, thinking, tools, prompt, provider,
//! loop configuration), each change announced where the session records it.

use super::provider::Provider;
use super::{
    AfterToolCallHook, Agent, AgentEvent, BeforeToolCallHook, ConvertToLlm, LoopConfig,
    ThinkingLevel, Tool, ToolExecution, ToolSet, TransformContext, lock,
};
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Agent {
    /// Announces a setting's new value as a `setting_update` event (recorded in the
    /// session; the client's status bar follows it).
    pub fn announce_setting(&self, key: &str, value: &impl serde::Serialize) {
        self.inner.sink.emit(AgentEvent::SettingUpdate {
            key: key.to_owned(),
            value: serde_json::to_value(value).unwrap_or_default(),
        });
    }

    /// Sets the system prompt for the next run (and the next turn of a running one).
    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        let prompt = prompt.into();
        let mut core = lock(&self.inner.core);
        core.update(|s| s.system_prompt = prompt);
        self.inner.tools_version.fetch_add(1, Ordering::AcqRel);
    }

    /// Sets the model for the next run.
    pub fn set_model(&self, model: impl Into<String>) {
        let model = model.into();
        lock(&self.inner.core).update(|s| s.model = model.clone());
        self.announce_setting("model", &model);
    }

    /// Sets the thinking level for the next run.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner.core).update(|s| s.thinking = level);
        self.announce_setting("thinking", &level);
    }

    /// Sets the tools for the next run (and the next turn of a running one).
    pub fn set_tools(&self, tools: Vec<Arc<dyn Tool>>) {
        self.set_tool_set(ToolSet::new(tools));
    }

    /// Sets the tools, with the interceptors their calls run under, for the next run
    /// (and the next turn of a running one).
    pub fn set_tool_set(&self, tools: ToolSet) {
        let mut core = lock(&self.inner.core);
        core.update(|s| s.tools = tools);
        self.inner.tools_version.fetch_add(1, Ordering::AcqRel);
    }

    /// Sets the provider for the next run.
    pub fn set_provider(&self, provider: Arc<dyn Provider>) {
        lock(&self.inner.settings).provider = provider;
    }

    /// The provider the next run will use (e.g. to list its models).
    pub fn provider(&self) -> Arc<dyn Provider> {
        lock(&self.inner.settings).provider.clone()
    }

    /// Changes loop settings (turn limit, tool mode, hooks, conversion) for the next run.
    pub fn configure(&self, change: impl FnOnce(&mut LoopConfig)) {
        change(&mut lock(&self.inner.settings).config);
    }

    /// Sets the turn limit for the next run.
    pub fn set_max_turns(&self, max_turns: u32) {
        self.configure(|c| c.max_turns = max_turns);
    }

    /// Sets sequential or parallel tool execution for the next run.
    pub fn set_tool_execution(&self, mode: ToolExecution) {
        self.configure(|c| c.tool_execution = mode);
        self.announce_setting("tool_execution", &mode);
    }

    /// Installs (or removes) the `before_tool_call` hook.
    pub fn set_before_tool_call(&self, hook: Option<BeforeToolCallHook>) {
        self.configure(|c| c.before_tool_call = hook);
    }

    /// Installs (or removes) the `after_tool_call` hook.
    pub fn set_after_tool_call(&self, hook: Option<AfterToolCallHook>) {
        self.configure(|c| c.after_tool_call = hook);
    }

    /// Installs (or removes) the context transform run before each LLM call.
    pub fn set_transform_context(&self, transform: Option<TransformContext>) {
        self.configure(|c| c.transform_context = transform);
    }

    /// Replaces the history-to-model conversion.
    pub fn set_convert_to_llm(&self, convert: ConvertToLlm) {
        self.configure(|c| c.convert_to_llm = convert);
    }
}
