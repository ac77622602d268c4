//! An MCP server for claw-tui's tests and benches, built on rmcp's server side.
//!
//! `mcp_fixture` serves over stdio; `mcp_fixture --http 127.0.0.1:PORT` serves
//! streamable HTTP at `http://127.0.0.1:PORT/mcp` (loopback only) and prints
//! `listening http://…/mcp` once bound. `--log FILE` appends one line per thing the
//! server saw (`call NAME`, `cancelled ID`, `start PID`, over HTTP the `authorization`
//! and `x-team` headers of each tool listing), so a test can check what reached it. `--loose-schema` gives `add` a schema no JSON Schema validator compiles
//! (the type `numbr`), as some servers do.
//!
//! `--raw MODE` serves by hand instead of through rmcp, misbehaving as `raw.rs` says (a
//! server that never answers `initialize`, refuses it, exits during it, sends replies
//! a transport cannot decode, or content parts a client cannot use).
//!
//! Tools: `echo {text}`, `add {a, b}` (structured content), `fail` (an error result),
//! `image` (a 1×1 PNG), `progress {steps}` (a progress notification per step),
//! `slow` (runs until cancelled), `toggle` (adds or removes the tool `extra` and sends
//! `notifications/tools/list_changed`), `crash` (the process exits at once), `pid`,
//! `getenv {name}`; with `--content-kinds`, `kinds` too (one content part of each kind
//! the spec names: text, image, audio, resource link, embedded text and blob resources).

mod raw;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A 1×1 transparent PNG.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[derive(Clone)]
struct Fixture {
    log: Option<PathBuf>,
    /// Whether `extra` is offered (switched by `toggle`; shared by HTTP sessions).
    extra: Arc<AtomicBool>,
    /// `--loose-schema`: `add` lists a schema that does not compile.
    loose_schema: bool,
    /// `--content-kinds`: the tool `kinds` is offered.
    content_kinds: bool,
}

impl Fixture {
    fn note(&self, line: &str) {
        if let Some(path) = &self.log
            && let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            // One write per line: `writeln!` writes the text and the newline apart, and
            // two calls noting at once then share a line.
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }

    fn tools(&self) -> Value {
        let object = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required});
        let number = if self.loose_schema { "numbr" } else { "number" };
        let mut tools = vec![
            json!({"name": "echo", "description": "Returns the text it is given.",
                   "inputSchema": object(json!({"text": {"type": "string"},
                                                "repeat": {"type": "integer", "minimum": 1}}),
                                         json!(["text"])),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "add", "description": "Adds two numbers.",
                   "inputSchema": object(json!({"a": {"type": number}, "b": {"type": "number"}}), json!(["a", "b"]))}),
            json!({"name": "fail", "description": "Always fails.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "image", "description": "Returns a 1x1 PNG.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "progress", "description": "Reports progress for each step.",
                   "inputSchema": object(json!({"steps": {"type": "integer", "minimum": 1}}), json!(["steps"]))}),
            json!({"name": "slow", "description": "Runs until cancelled.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "toggle", "description": "Adds or removes the tool extra.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "crash", "description": "Exits the server process.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "pid", "description": "The server's process id.", "inputSchema": object(json!({}), json!([]))}),
            json!({"name": "getenv", "description": "The value of an environment variable of the server.",
                   "inputSchema": object(json!({"name": {"type": "string"}}), json!(["name"]))}),
        ];
        if self.content_kinds {
            tools.push(
                json!({"name": "kinds", "description": "Returns one content part of each kind.",
                       "inputSchema": object(json!({}), json!([]))}),
            );
        }
        if self.extra.load(Ordering::SeqCst) {
            tools.push(
                json!({"name": "extra", "description": "Appears after toggle.",
                              "inputSchema": object(json!({}), json!([]))}),
            );
        }
        json!({ "tools": tools })
    }
}

fn text_result(text: &str, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info = rmcp::model::Implementation::new("mcp-fixture", "1.0.0");
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Over HTTP: what the client sent, so a test can check its headers arrived.
        if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
            let header = |name: &str| {
                parts
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("(none)")
                    .to_owned()
            };
            self.note(&format!(
                "headers authorization={} x-team={}",
                header("authorization"),
                header("x-team")
            ));
        }
        serde_json::from_value(self.tools()).map_err(internal)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        self.note(&format!("call {} id {}", request.name, context.id));
        let result = match request.name.as_ref() {
            "echo" => {
                let text = args["text"].as_str().unwrap_or_default();
                let times = args["repeat"].as_u64().unwrap_or(1);
                text_result(&text.repeat(usize::try_from(times).unwrap_or(1)), false)
            }
            "add" => {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                json!({"content": [{"type": "text", "text": format!("{sum}")}],
                       "structuredContent": {"sum": sum}})
            }
            "fail" => text_result("it failed on purpose", true),
            "image" => {
                json!({"content": [{"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}]})
            }
            "kinds" => json!({"content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///notes.txt", "name": "notes.txt",
                 "description": "The notes", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "test://doc/1", "mimeType": "text/plain",
                                                  "text": "embedded text"}},
                {"type": "resource", "resource": {"uri": "test://doc/2",
                                                  "mimeType": "application/octet-stream",
                                                  "blob": "AAAA"}}
            ]}),
            "progress" => {
                let steps = args["steps"].as_u64().unwrap_or(1);
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=steps {
                        let param: ProgressNotificationParam = serde_json::from_value(json!({
                            "progressToken": token,
                            "progress": step,
                            "total": steps,
                            "message": format!("step {step} of {steps}"),
                        }))
                        .map_err(internal)?;
                        context
                            .peer
                            .notify_progress(param)
                            .await
                            .map_err(internal)?;
                    }
                }
                text_result(&format!("done after {steps} steps"), false)
            }
            "slow" => {
                tokio::select! {
                    () = context.ct.cancelled() => {
                        self.note(&format!("slow call {} stopped by cancellation", context.id));
                        text_result("cancelled", true)
                    }
                    () = tokio::time::sleep(Duration::from_secs(600)) => text_result("finished", false),
                }
            }
            "toggle" => {
                let now = !self.extra.fetch_xor(true, Ordering::SeqCst);
                context
                    .peer
                    .notify_tool_list_changed()
                    .await
                    .map_err(internal)?;
                text_result(if now { "extra added" } else { "extra removed" }, false)
            }
            "crash" => {
                self.note("crash");
                std::process::exit(3);
            }
            "pid" => text_result(&std::process::id().to_string(), false),
            "getenv" => {
                let name = args["name"].as_str().unwrap_or_default();
                text_result(
                    &std::env::var(name).unwrap_or_else(|_| "(unset)".into()),
                    false,
                )
            }
            "extra" => text_result("extra ran", false),
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        let result: CallToolResult = serde_json::from_value(result).map_err(internal)?;
        Ok(CallToolResponse::Complete(result))
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        let id = notification
            .request_id
            .map(|id| id.to_string())
            .unwrap_or_default();
        let reason = notification.reason.unwrap_or_default();
        self.note(&format!("cancelled {id} reason {reason}"));
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    if let Some(mode) = value_of("--raw") {
        return raw::serve(&mode);
    }
    let fixture = Fixture {
        log: value_of("--log").map(PathBuf::from),
        extra: Arc::default(),
        loose_schema: args.iter().any(|a| a == "--loose-schema"),
        content_kinds: args.iter().any(|a| a == "--content-kinds"),
    };
    fixture.note(&format!("start {}", std::process::id()));
    // A server slow to come up (a first download, a heavy runtime): busy for this long
    // before it answers anything.
    if let Some(ms) = value_of("--start-delay-ms").and_then(|v| v.parse().ok()) {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        fixture.note(&format!("up {}", std::process::id()));
    }
    match value_of("--http") {
        None => {
            let service = fixture.serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
        }
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            let bound = listener.local_addr()?;
            if !bound.ip().is_loopback() {
                return Err("the fixture serves on loopback addresses only".into());
            }
            let shared = fixture.clone();
            let service = StreamableHttpService::new(
                move || Ok(shared.clone()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            println!("listening http://{bound}/mcp");
            std::io::stdout().flush()?;
            axum::serve(listener, router).await?;
        }
    }
    Ok(())
}
