//! OpenAI Responses API event streams, shaped like the API's own: `event: TYPE` plus a
//! `data:` object carrying the same `type`, a `sequence_number`, and the item and
//! output indexes; reasoning items with `summary` parts and `encrypted_content`;
//! function calls whose `arguments` stream as deltas; `response.completed` with usage.

use serde_json::{Value, json};

/// Builds one response's events in order, numbering them as the API does.
pub struct Script {
    model: String,
    seq: u64,
    events: Vec<String>,
    output: Vec<Value>,
}

impl Script {
    /// A response from `model`, opened by `response.created` and `response.in_progress`.
    pub fn new(model: &str) -> Self {
        let mut script = Self {
            model: model.to_owned(),
            seq: 0,
            events: Vec::new(),
            output: Vec::new(),
        };
        let response = script.response("in_progress", Value::Null);
        script.push(json!({"type": "response.created", "response": response}));
        let response = script.response("in_progress", Value::Null);
        script.push(json!({"type": "response.in_progress", "response": response}));
        script
    }

    fn response(&self, status: &str, usage: Value) -> Value {
        json!({"id": "resp_0123", "object": "response", "created_at": 1_760_000_000,
               "status": status, "background": false, "error": null,
               "incomplete_details": null, "instructions": null, "max_output_tokens": null,
               "model": self.model, "output": self.output, "parallel_tool_calls": true,
               "previous_response_id": null, "store": false, "temperature": 1.0,
               "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
               "usage": usage, "user": null, "metadata": {}})
    }

    fn push(&mut self, mut data: Value) {
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        let kind = data["type"].as_str().unwrap().to_owned();
        self.events.push(format!("event: {kind}\ndata: {data}\n\n"));
    }

    /// A reasoning item at `index` whose summary parts stream as `parts` (each part a
    /// list of deltas), finished with `encrypted`.
    pub fn reasoning(mut self, index: usize, parts: &[&[&str]], encrypted: &str) -> Self {
        let id = format!("rs_{index:04}");
        self.push(
            json!({"type": "response.output_item.added", "output_index": index,
                         "item": {"id": id, "type": "reasoning", "summary": []}}),
        );
        let mut summary = Vec::new();
        for (part, deltas) in parts.iter().enumerate() {
            self.push(
                json!({"type": "response.reasoning_summary_part.added", "item_id": id,
                             "output_index": index, "summary_index": part,
                             "part": {"type": "summary_text", "text": ""}}),
            );
            for delta in *deltas {
                self.push(json!({"type": "response.reasoning_summary_text.delta",
                                 "item_id": id, "output_index": index, "summary_index": part,
                                 "delta": delta, "obfuscation": "x1"}));
            }
            let text: String = deltas.concat();
            self.push(
                json!({"type": "response.reasoning_summary_text.done", "item_id": id,
                             "output_index": index, "summary_index": part, "text": text}),
            );
            self.push(
                json!({"type": "response.reasoning_summary_part.done", "item_id": id,
                             "output_index": index, "summary_index": part,
                             "part": {"type": "summary_text", "text": text}}),
            );
            summary.push(json!({"type": "summary_text", "text": text}));
        }
        let item = json!({"id": id, "type": "reasoning", "encrypted_content": encrypted,
                          "summary": summary});
        self.push(
            json!({"type": "response.output_item.done", "output_index": index,
                         "item": item}),
        );
        self.output.push(item);
        self
    }

    /// An assistant message at `index` whose text streams as `deltas`.
    pub fn message(mut self, index: usize, deltas: &[&str]) -> Self {
        let id = format!("msg_{index:04}");
        self.push(
            json!({"type": "response.output_item.added", "output_index": index,
                         "item": {"id": id, "type": "message", "status": "in_progress",
                                  "content": [], "role": "assistant"}}),
        );
        self.push(json!({"type": "response.content_part.added", "item_id": id,
                         "output_index": index, "content_index": 0,
                         "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}}));
        for delta in deltas {
            self.push(json!({"type": "response.output_text.delta", "item_id": id,
                             "output_index": index, "content_index": 0, "delta": delta,
                             "logprobs": [], "obfuscation": "ab"}));
        }
        let text: String = deltas.concat();
        self.push(json!({"type": "response.output_text.done", "item_id": id,
                         "output_index": index, "content_index": 0, "text": text,
                         "logprobs": []}));
        let part = json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
        self.push(json!({"type": "response.content_part.done", "item_id": id,
                         "output_index": index, "content_index": 0, "part": part}));
        let item = json!({"id": id, "type": "message", "status": "completed",
                          "content": [part], "role": "assistant"});
        self.push(
            json!({"type": "response.output_item.done", "output_index": index,
                         "item": item}),
        );
        self.output.push(item);
        self
    }

    /// Announces a function call at `index` (its arguments follow as deltas).
    pub fn call_added(mut self, index: usize, call_id: &str, name: &str) -> Self {
        self.push(
            json!({"type": "response.output_item.added", "output_index": index,
                         "item": {"id": format!("fc_{index:04}"), "type": "function_call",
                                  "status": "in_progress", "arguments": "",
                                  "call_id": call_id, "name": name}}),
        );
        self
    }

    /// A fragment of the arguments of the call at `index`.
    pub fn args(mut self, index: usize, delta: &str) -> Self {
        self.push(json!({"type": "response.function_call_arguments.delta",
                         "item_id": format!("fc_{index:04}"), "output_index": index,
                         "delta": delta, "obfuscation": "q"}));
        self
    }

    /// Finishes the call at `index` (`.done` events repeating the whole arguments).
    pub fn call_done(mut self, index: usize, call_id: &str, name: &str, arguments: &str) -> Self {
        let id = format!("fc_{index:04}");
        self.push(
            json!({"type": "response.function_call_arguments.done", "item_id": id,
                         "output_index": index, "arguments": arguments}),
        );
        let item = json!({"id": id, "type": "function_call", "status": "completed",
                          "arguments": arguments, "call_id": call_id, "name": name});
        self.push(
            json!({"type": "response.output_item.done", "output_index": index,
                         "item": item}),
        );
        self.output.push(item);
        self
    }

    /// A whole function call with its arguments in `deltas`.
    pub fn call(self, index: usize, call_id: &str, name: &str, deltas: &[&str]) -> Self {
        let mut script = self.call_added(index, call_id, name);
        for delta in deltas {
            script = script.args(index, delta);
        }
        script.call_done(index, call_id, name, &deltas.concat())
    }

    /// Ends with `response.completed` and this usage.
    pub fn completed(
        mut self,
        input: u64,
        cached: u64,
        output: u64,
        reasoning: u64,
    ) -> Vec<String> {
        let usage = usage(input, cached, output, reasoning);
        let response = self.response("completed", usage);
        self.push(json!({"type": "response.completed", "response": response}));
        self.events
    }

    /// Ends with `response.incomplete` for `reason` (`max_output_tokens`...).
    pub fn incomplete(mut self, reason: &str) -> Vec<String> {
        let mut response = self.response("incomplete", usage(100, 0, 50, 0));
        response["incomplete_details"] = json!({"reason": reason});
        self.push(json!({"type": "response.incomplete", "response": response}));
        self.events
    }

    /// Ends with `response.failed` carrying `code` and `message`.
    pub fn failed(mut self, code: &str, message: &str) -> Vec<String> {
        let mut response = self.response("failed", Value::Null);
        response["error"] = json!({"code": code, "message": message});
        self.push(json!({"type": "response.failed", "response": response}));
        self.events
    }

    /// Ends with an `error` event.
    pub fn error(mut self, code: &str, message: &str) -> Vec<String> {
        self.push(json!({"type": "error", "code": code, "message": message, "param": null}));
        self.events
    }
}

/// The usage object of a finished response.
pub fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
           "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
           "total_tokens": input + output})
}

/// A complete text reply.
pub fn text_reply(model: &str, parts: &[&str]) -> Vec<String> {
    Script::new(model).message(0, parts).completed(50, 0, 10, 0)
}
