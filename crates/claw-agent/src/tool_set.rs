//! The tools of an agent as the loop calls them: each tool with its argument schema
//! compiled once and the interceptors its calls run under, and the one way to call one
//! ([`ToolSet::call`]: checked arguments, then the pipeline of [`crate::intercept`]).

use super::intercept::{CheckedArgs, Interceptor, Next, ToolCallContext};
use super::tool::{Tool, ToolDefinition, ToolResult, ToolUpdates};
use super::tool_args::{ArgsError, InvalidSchema, check};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tokio_util::sync::CancellationToken;

/// A tool together with its compiled argument validator (`Ok(None)`: not validated) and
/// the interceptors its calls run under.
struct Entry {
    tool: Arc<dyn Tool>,
    validator: Result<Option<jsonschema::Validator>, Arc<InvalidSchema>>,
    interceptors: Arc<[Arc<dyn Interceptor>]>,
}

impl Entry {
    fn new(tool: Arc<dyn Tool>, interceptors: Arc<[Arc<dyn Interceptor>]>) -> Self {
        let validator = match jsonschema::validator_for(&tool.spec().parameters) {
            Ok(validator) => Ok(Some(validator)),
            Err(e) if !tool.spec().strict => {
                tracing::info!(
                    tool = tool.name(),
                    "arguments are not validated: the schema does not compile ({e})"
                );
                Ok(None)
            }
            Err(e) => Err(Arc::new(InvalidSchema(e))),
        };
        Entry {
            tool,
            validator,
            interceptors,
        }
    }

    /// Checks `args` against the tool's schema: the arguments the tool is given, or
    /// every problem with them.
    fn check(&self, args: Value) -> Result<Value, ArgsError> {
        let spec = self.tool.spec();
        let validator = self
            .validator
            .as_ref()
            .map_err(|source| ArgsError::Uncheckable {
                name: spec.name.clone(),
                source: source.clone(),
            })?;
        match validator {
            Some(validator) => check(&spec.name, validator, &spec.parameters, args, spec.strict),
            None => Ok(args),
        }
    }
}

/// Checks `args` for `tool` outside any set, its schema compiled for this one call.
pub(crate) fn check_alone(tool: &dyn Tool, args: Value) -> Result<Value, ArgsError> {
    let spec = tool.spec();
    match jsonschema::validator_for(&spec.parameters) {
        Ok(validator) => check(&spec.name, &validator, &spec.parameters, args, spec.strict),
        Err(_) if !spec.strict => Ok(args),
        Err(e) => Err(ArgsError::Uncheckable {
            name: spec.name.clone(),
            source: Arc::new(InvalidSchema(e)),
        }),
    }
}

/// The tools of an agent, with argument schemas compiled once, and the interceptors
/// their calls run under (see [`crate::intercept`]).
#[derive(Clone, Default)]
pub struct ToolSet {
    entries: Arc<Vec<Arc<Entry>>>,
}

impl ToolSet {
    /// Compiles the schemas of `tools`; a broken schema fails only that tool's calls.
    /// Their calls run under no interceptor.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self::intercepted(tools, Vec::new())
    }

    /// `tools` whose every call runs under `interceptors`, outermost first.
    pub fn intercepted(tools: Vec<Arc<dyn Tool>>, interceptors: Vec<Arc<dyn Interceptor>>) -> Self {
        let interceptors: Arc<[Arc<dyn Interceptor>]> = interceptors.into();
        let entries = tools
            .into_iter()
            .map(|tool| Arc::new(Entry::new(tool, interceptors.clone())))
            .collect();
        Self {
            entries: Arc::new(entries),
        }
    }

    /// These tools plus those of `older` that have no namesake here: a run under way
    /// gains new tools but keeps the ones it started with, with the interceptors they
    /// came with (plan mode, an MCP server that dropped the tool: their own guards then
    /// answer its calls).
    pub fn keeping(&self, older: &ToolSet) -> ToolSet {
        let missing: Vec<Arc<Entry>> = older
            .entries
            .iter()
            .filter(|e| self.find(e.tool.name()).is_none())
            .cloned()
            .collect();
        if missing.is_empty() {
            return self.clone();
        }
        let mut entries: Vec<Arc<Entry>> = self.entries.iter().cloned().collect();
        entries.extend(missing);
        ToolSet {
            entries: Arc::new(entries),
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.find(name).map(|e| e.tool.clone())
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// The names of the tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The definitions providers send to the model.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.entries
            .iter()
            .map(|e| ToolDefinition {
                name: e.tool.name().to_owned(),
                description: e.tool.description().to_owned(),
                parameters: e.tool.parameters(),
            })
            .collect()
    }

    /// Checks `args` against the tool's schema; the error lists every failing path.
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), ArgsError> {
        match self.find(name) {
            Some(entry) => entry.check(args.clone()).map(|_| ()),
            None => Err(ArgsError::UnknownTool {
                name: name.to_owned(),
            }),
        }
    }

    /// Calls the tool `name`: its arguments checked once, then `outer` and the set's
    /// interceptors around the tool (outermost first). Unknown tools and invalid
    /// arguments are error results the model can act on. The caller closes `updates`
    /// once it has the result.
    pub async fn call(
        &self,
        outer: Option<&Arc<dyn Interceptor>>,
        name: &str,
        call_id: &str,
        args: Value,
        cancel: &CancellationToken,
        updates: &ToolUpdates,
    ) -> ToolResult {
        let Some(entry) = self.find(name) else {
            return ToolResult::error(format!("Tool \"{name}\" not found"));
        };
        let args = match entry.check(args) {
            Ok(args) => args,
            Err(problem) => return ToolResult::error(problem.to_string()),
        };
        let checker = |args: Value| entry.check(args);
        let call = ToolCallContext {
            tool_call_id: call_id,
            tool: &entry.tool,
            cancel,
            updates,
            checker: &checker,
            ran: AtomicBool::new(false),
        };
        let args = CheckedArgs::new(args);
        match outer {
            Some(outer) => {
                let with_outer: Vec<Arc<dyn Interceptor>> = std::iter::once(outer.clone())
                    .chain(entry.interceptors.iter().cloned())
                    .collect();
                let next = Next {
                    rest: &with_outer,
                    call: &call,
                };
                next.run(args).await
            }
            None => {
                let next = Next {
                    rest: &entry.interceptors,
                    call: &call,
                };
                next.run(args).await
            }
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<Entry>> {
        self.entries.iter().find(|e| e.tool.name() == name)
    }
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.entries.iter().map(|e| e.tool.name()).collect();
        f.debug_tuple("ToolSet").field(&names).finish()
    }
}
