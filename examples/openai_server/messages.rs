//! Anthropic's Messages API: `message_start` with the input usage, one
//! text block of a `content_block_delta` per word, then `message_delta`
//! with the stop reason and output usage, and `message_stop`.

use axum::body::Bytes;
use serde_json::{json, Value};

use super::reply::{typed, Format, Reply};

/// The Messages API's format.
pub struct Messages;

/// Anthropic's usage: `input_tokens` leaves out the tokens read from the
/// prompt cache.
fn usage(reply: &Reply, output_tokens: u64) -> Value {
    json!({"input_tokens": reply.prompt_tokens - reply.cached_tokens,
           "cache_read_input_tokens": reply.cached_tokens,
           "cache_creation_input_tokens": 0,
           "output_tokens": output_tokens})
}

fn message(reply: &Reply, content: Value, stop_reason: Value, output_tokens: u64) -> Value {
    json!({"id": reply.id, "type": "message", "role": "assistant", "model": reply.model,
           "content": content, "stop_reason": stop_reason, "stop_sequence": null,
           "usage": usage(reply, output_tokens)})
}

impl Format for Messages {
    fn opening(&mut self, reply: &Reply) -> Vec<Bytes> {
        vec![
            typed(&json!({"type": "message_start",
                          "message": message(reply, json!([]), Value::Null, 0)})),
            typed(&json!({"type": "content_block_start", "index": 0,
                          "content_block": {"type": "text", "text": ""}})),
            typed(&json!({"type": "ping"})),
        ]
    }

    fn word(&mut self, _reply: &Reply, text: &str, _last: bool) -> Bytes {
        typed(&json!({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": text}}))
    }

    fn closing(&mut self, reply: &Reply, _text: &str) -> Vec<Bytes> {
        vec![
            typed(&json!({"type": "content_block_stop", "index": 0})),
            typed(&json!({"type": "message_delta",
                          "delta": {"stop_reason": "max_tokens", "stop_sequence": null},
                          "usage": {"output_tokens": reply.output_tokens}})),
            typed(&json!({"type": "message_stop"})),
        ]
    }

    fn whole(&self, reply: &Reply, text: &str) -> Value {
        message(
            reply,
            json!([{"type": "text", "text": text}]),
            json!("max_tokens"),
            reply.output_tokens,
        )
    }
}
