#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! What the model is told about every built-in tool: name, description and argument
//! schema, one snapshot per tool, so a change to any of them shows up in review.

use async_trait::async_trait;
use claw_tui::agent::{Tool, ToolResult, ToolSet, ToolUpdates};
use claw_tui::tools::cron::{CronTool, UnavailableCron};
use claw_tui::tools::exec::{ExecConfig, ExecTool};
use claw_tui::tools::fs::file_tools;
use claw_tui::tools::message::MessageTool;
use claw_tui::tools::spawn::{SpawnBackend, SpawnTool};
use claw_tui::tools::web::{WebConfig, WebFetchTool, WebSearchTool};
use claw_tui::tools::{ToolRegistry, Workspace};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

struct NoSubagents;

#[async_trait]
impl SpawnBackend for NoSubagents {
    type Error = std::io::Error;

    async fn spawn(&self, _: &str, _: String, _: Option<String>) -> std::io::Result<String> {
        Err(std::io::Error::other("no subagents here"))
    }
}

/// Every built-in tool, as the application registers them (default settings).
fn builtin_tools() -> ToolRegistry {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Arc::new(Workspace::new(dir.path(), false));
    let mut tools: Vec<Arc<dyn Tool>> = file_tools(workspace);
    tools.push(Arc::new(ExecTool::new(dir.path(), ExecConfig::default())));
    tools.push(Arc::new(WebSearchTool::new(WebConfig::default())));
    tools.push(Arc::new(WebFetchTool::new(WebConfig::default())));
    tools.push(Arc::new(MessageTool::new(Arc::new(|_| {}))));
    tools.push(Arc::new(SpawnTool::new(Arc::new(NoSubagents))));
    tools.push(Arc::new(CronTool::new(Arc::new(UnavailableCron::new(
        std::io::Error::other("not in this test"),
    )))));
    tools.into_iter().collect()
}

#[test]
fn the_specs_of_the_builtins_say_which_change_nothing() {
    let read_only: Vec<String> = builtin_tools()
        .tools()
        .iter()
        .filter(|t| t.spec().read_only)
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(read_only, claw_tui::tools::READ_ONLY_TOOLS);
    assert!(builtin_tools().tools().iter().all(|t| t.spec().strict));
}

#[test]
fn every_builtin_tool_is_covered() {
    assert_eq!(
        builtin_tools().names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "exec",
            "web_search",
            "web_fetch",
            "message",
            "spawn",
            "cron"
        ]
    );
}

#[test]
fn what_the_model_sees_of_each_tool() {
    for definition in builtin_tools().definitions() {
        let shown = format!(
            "{}\n\n{}\n\n{}",
            definition.name,
            definition.description,
            serde_json::to_string_pretty(&definition.parameters).unwrap()
        );
        insta::assert_snapshot!(definition.name.clone(), shown);
    }
}

/// Keys some providers reject in a tool's parameters, or that only add noise there.
const NOISE: [&str; 5] = ["$schema", "$ref", "$defs", "definitions", "title"];

fn noise_in(schema: &Value, path: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                // A property may be called anything; only schema keywords count.
                if NOISE.contains(&key.as_str()) && !path.ends_with("/properties") {
                    found.push(format!("{path}/{key}"));
                }
                noise_in(value, &format!("{path}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                noise_in(item, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn schemas_are_plain_objects_the_validator_compiles() {
    let registry = builtin_tools();
    for definition in registry.definitions() {
        let schema = &definition.parameters;
        assert_eq!(schema["type"], "object", "{}", definition.name);
        assert!(schema["properties"].is_object(), "{}", definition.name);
        let mut found = Vec::new();
        noise_in(schema, "", &mut found);
        assert!(found.is_empty(), "{}: {found:?}", definition.name);
        jsonschema::validator_for(schema).unwrap();
    }
    // A schema that failed to compile would make ToolSet refuse every call of its tool.
    let set = ToolSet::new(registry.tools());
    assert!(set.validate("read_file", &json!({"path": "a"})).is_ok());
}

/// A value of another JSON type than `schema` asks for.
fn wrong_value_for(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!(17),
        _ => json!("seventeen"),
    }
}

/// A value `schema` accepts.
fn good_value_for(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(true),
        _ => json!("x"),
    }
}

async fn call(tool: &dyn Tool, args: Map<String, Value>) -> ToolResult {
    let args = match crate::support::check(tool, Value::Object(args)) {
        Ok(args) => args,
        Err(refused) => return refused,
    };
    tool.execute("c1", args, CancellationToken::new(), ToolUpdates::discard())
        .await
}

/// Called directly, past the agent loop's validation, every tool names the one argument
/// that is wrong or missing: its parsing reads the very fields its schema lists. Nothing
/// runs: each call has exactly one bad argument.
#[tokio::test]
async fn direct_calls_name_the_bad_argument() {
    let registry = builtin_tools();
    for definition in registry.definitions() {
        let tool = registry.get(&definition.name).unwrap();
        let properties = definition.parameters["properties"].as_object().unwrap();
        let required: Vec<&str> = definition.parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let good: Map<String, Value> = required
            .iter()
            .map(|r| (r.to_string(), good_value_for(&properties[*r])))
            .collect();
        for (name, schema) in properties {
            let mut args = good.clone();
            args.insert(name.clone(), wrong_value_for(schema));
            let result = call(tool.as_ref(), args).await;
            assert!(result.is_error, "{}.{name}: {result:?}", definition.name);
            assert!(
                result
                    .content
                    .contains(&format!("/{name}: Argument \"{name}\" must be ")),
                "{}.{name}: {}",
                definition.name,
                result.content
            );
        }
        for name in &required {
            let mut args = good.clone();
            args.remove(*name);
            let result = call(tool.as_ref(), args).await;
            let missing =
                format!("Missing required argument \"{name}\". Call again with \"{name}\" set.");
            assert!(
                result.content.contains(&missing),
                "{}: {}",
                definition.name,
                result.content
            );
        }
    }
}

/// A model's `null` for an optional argument is that argument left out, through the tool
/// set as for a direct call (models often send it); a `null` for a required one is a
/// missing argument, and a whole float where an integer is wanted is that integer.
#[tokio::test]
async fn through_the_tool_set_null_is_absent_and_whole_floats_are_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "one\ntwo\nthree\n").unwrap();
    let set = ToolSet::new(file_tools(Arc::new(Workspace::new(dir.path(), false))));
    let run = |args: Value| {
        let set = set.clone();
        async move {
            set.call(
                None,
                "read_file",
                "c1",
                args,
                &CancellationToken::new(),
                &ToolUpdates::discard(),
            )
            .await
        }
    };
    let r = run(json!({"path": "f.txt", "offset": null, "limit": null})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.starts_with("one\ntwo\nthree"), "{}", r.content);
    let r = run(json!({"path": "f.txt", "offset": 2.0, "limit": 1.0})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.starts_with("two"), "{}", r.content);
    let r = run(json!({"path": null})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("Missing required argument \"path\""),
        "{}",
        r.content
    );
}
