//! OpenAI's Responses API: typed events (`response.created`, the output
//! item and its text part opened, a `response.output_text.delta` per word,
//! everything closed, then `response.incomplete` with `usage`: the toy
//! always stops at its token limit, which this API reports as an
//! incomplete response).

use axum::body::Bytes;
use serde_json::{json, Value};

use super::reply::{typed, Format, Reply};

/// The Responses API's format; numbers its events.
#[derive(Default)]
pub struct Responses {
    sequence: u64,
}

impl Responses {
    fn event(&mut self, mut value: Value) -> Bytes {
        value["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        typed(&value)
    }
}

fn item_id(reply: &Reply) -> String {
    format!("msg_{}", reply.id)
}

fn message(reply: &Reply, text: &str, status: &str) -> Value {
    json!({"id": item_id(reply), "type": "message", "status": status, "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// The response object; `output` and `usage` once it is done.
fn response(reply: &Reply, done: Option<&str>) -> Value {
    let (status, output, usage, incomplete) = match done {
        None => ("in_progress", json!([]), Value::Null, Value::Null),
        Some(text) => (
            "incomplete",
            json!([message(reply, text, "incomplete")]),
            json!({"input_tokens": reply.prompt_tokens,
                   "input_tokens_details": {"cached_tokens": reply.cached_tokens},
                   "output_tokens": reply.output_tokens,
                   "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": reply.prompt_tokens + reply.output_tokens}),
            json!({"reason": "max_output_tokens"}),
        ),
    };
    json!({"id": reply.id, "object": "response", "created_at": reply.created, "model": reply.model,
           "status": status, "error": null, "incomplete_details": incomplete,
           "max_output_tokens": reply.output_tokens, "output": output, "usage": usage})
}

impl Format for Responses {
    fn opening(&mut self, reply: &Reply) -> Vec<Bytes> {
        let mut item = message(reply, "", "in_progress");
        item["content"] = json!([]);
        vec![
            self.event(json!({"type": "response.created", "response": response(reply, None)})),
            self.event(
                json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            ),
            self.event(
                json!({"type": "response.content_part.added", "item_id": item_id(reply),
                              "output_index": 0, "content_index": 0,
                              "part": {"type": "output_text", "text": "", "annotations": []}}),
            ),
        ]
    }

    fn word(&mut self, reply: &Reply, text: &str, _last: bool) -> Bytes {
        self.event(
            json!({"type": "response.output_text.delta", "item_id": item_id(reply),
                          "output_index": 0, "content_index": 0, "delta": text, "logprobs": []}),
        )
    }

    fn closing(&mut self, reply: &Reply, text: &str) -> Vec<Bytes> {
        vec![
            self.event(
                json!({"type": "response.output_text.done", "item_id": item_id(reply),
                              "output_index": 0, "content_index": 0, "text": text, "logprobs": []}),
            ),
            self.event(
                json!({"type": "response.content_part.done", "item_id": item_id(reply),
                              "output_index": 0, "content_index": 0,
                              "part": {"type": "output_text", "text": text, "annotations": []}}),
            ),
            self.event(
                json!({"type": "response.output_item.done", "output_index": 0,
                              "item": message(reply, text, "incomplete")}),
            ),
            self.event(
                json!({"type": "response.incomplete", "response": response(reply, Some(text))}),
            ),
        ]
    }

    fn whole(&self, reply: &Reply, text: &str) -> Value {
        response(reply, Some(text))
    }
}
