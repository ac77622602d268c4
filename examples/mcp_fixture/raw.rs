//! `mcp_fixture --raw MODE`: a stdio server written by hand, line by line, for what a
//! well-behaved server (rmcp's) never sends. Modes:
//!
//! - `silent-init`: reads `initialize` and never answers it;
//! - `error-init`: answers `initialize` with a JSON-RPC error;
//! - `exit-init`: says why on stderr and exits (code 4) on `initialize`;
//! - `bad-replies`: a normal handshake, then the tools `bad_utf8` (its result's text holds
//!   bytes that are not UTF-8), `huge {mb}` (a result of `mb` MB on one line, the id at
//!   the end of the object), `odd_content` (a result whose parts a client cannot all
//!   use: a type MCP does not define, an image without its `mimeType`, a part without a
//!   type, between two text parts), `not_a_result` (a result whose `content` is a string)
//!   and `echo {text}`.

use serde_json::{Value, json};
use std::io::{BufRead, Write};

/// Serves `mode` on stdin and stdout until stdin ends.
pub fn serve(mode: &str) -> Result<(), Box<dyn std::error::Error>> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let request: Value = match serde_json::from_str(&line?) {
            Ok(value) => value,
            Err(_) => continue,
        };
        let id = request["id"].clone();
        let method = request["method"].as_str().unwrap_or_default().to_owned();
        match (mode, method.as_str()) {
            (_, "notifications/initialized") => {}
            ("silent-init", _) => {}
            ("error-init", "initialize") => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32603, "message": "the fixture refuses to start"}}),
            )?,
            ("exit-init", "initialize") => {
                eprintln!("fixture: giving up during the handshake");
                std::process::exit(4);
            }
            (_, "initialize") => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mcp-fixture-raw", "version": "1.0.0"}}}),
            )?,
            (_, "tools/list") => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools()}}),
            )?,
            (_, "tools/call") => call(&mut out, &id, &request["params"])?,
            _ if !id.is_null() => send(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": format!("no method {method}")}}),
            )?,
            _ => {}
        }
    }
    Ok(())
}

fn tools() -> Value {
    let object = |props: Value| json!({"type": "object", "properties": props});
    json!([
        {"name": "bad_utf8", "description": "A result that is not UTF-8.", "inputSchema": object(json!({}))},
        {"name": "huge", "description": "A result of `mb` MB.",
         "inputSchema": object(json!({"mb": {"type": "integer"}}))},
        {"name": "odd_content", "description": "A result with parts a client cannot use.",
         "inputSchema": object(json!({}))},
        {"name": "not_a_result", "description": "A result that is no tool result.",
         "inputSchema": object(json!({}))},
        {"name": "echo", "description": "Returns the text it is given.",
         "inputSchema": object(json!({"text": {"type": "string"}}))},
    ])
}

fn call(out: &mut impl Write, id: &Value, params: &Value) -> std::io::Result<()> {
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    match params["name"].as_str().unwrap_or_default() {
        "bad_utf8" => {
            let mut line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"bad "#
            )
            .into_bytes();
            line.extend_from_slice(b"\xff\xfe");
            line.extend_from_slice(b" bytes\"}]}}\n");
            out.write_all(&line)?;
            out.flush()
        }
        "huge" => {
            let mb = params["arguments"]["mb"].as_u64().unwrap_or(20);
            let body = "x".repeat(usize::try_from(mb).unwrap_or(20) * 1_000_000);
            // The id last, as some servers write it: the client must find it anyway.
            let line = format!(
                r#"{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{body}"}}]}},"id":{id}}}"#
            );
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            out.flush()
        }
        "odd_content" => send(
            out,
            &json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                {"type": "text", "text": "before"},
                {"type": "video", "data": "AAAA", "mimeType": "video/mp4"},
                {"type": "image", "data": "AAAA"},
                {"data": "AAAA"},
                {"type": "text", "text": "after"}
            ]}}),
        ),
        "not_a_result" => send(
            out,
            &json!({"jsonrpc": "2.0", "id": id, "result": {"content": "just text"}}),
        ),
        "echo" => send(
            out,
            &json!({"jsonrpc": "2.0", "id": id,
                    "result": text(params["arguments"]["text"].as_str().unwrap_or_default())}),
        ),
        other => send(
            out,
            &json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32602, "message": format!("no tool {other}")}}),
        ),
    }
}

fn send(out: &mut impl Write, message: &Value) -> std::io::Result<()> {
    out.write_all(message.to_string().as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}
