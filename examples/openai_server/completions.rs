//! Chat Completions and Completions: a chunk per word, `usage` in a last
//! chunk with no choices, then `[DONE]`.

use axum::body::Bytes;
use serde_json::{json, Value};

use super::reply::{data, Format, Reply};

/// `chat` for `/v1/chat/completions`, else `/v1/completions`.
pub struct Completions {
    pub chat: bool,
}

impl Completions {
    fn chunk(&self, reply: &Reply, text: &str, finish: Option<&str>) -> Value {
        if self.chat {
            json!({"id": reply.id, "object": "chat.completion.chunk", "created": reply.created, "model": reply.model,
                   "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]})
        } else {
            json!({"id": reply.id, "object": "text_completion", "created": reply.created, "model": reply.model,
                   "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": finish}]})
        }
    }
}

/// OpenAI's `usage`.
fn usage(reply: &Reply) -> Value {
    json!({"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.output_tokens,
           "total_tokens": reply.prompt_tokens + reply.output_tokens,
           "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}})
}

impl Format for Completions {
    fn opening(&mut self, _reply: &Reply) -> Vec<Bytes> {
        Vec::new()
    }

    fn word(&mut self, reply: &Reply, text: &str, last: bool) -> Bytes {
        data(&self.chunk(reply, text, last.then_some("length")))
    }

    fn closing(&mut self, reply: &Reply, _text: &str) -> Vec<Bytes> {
        let mut chunk = self.chunk(reply, "", None);
        chunk["choices"] = json!([]);
        chunk["usage"] = usage(reply);
        vec![data(&chunk), Bytes::from_static(b"data: [DONE]\n\n")]
    }

    fn whole(&self, reply: &Reply, text: &str) -> Value {
        let (object, choice) = if self.chat {
            (
                "chat.completion",
                json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}),
            )
        } else {
            (
                "text_completion",
                json!({"index": 0, "text": text, "logprobs": null, "finish_reason": "length"}),
            )
        };
        json!({"id": reply.id, "object": object, "created": reply.created, "model": reply.model,
               "choices": [choice], "usage": usage(reply)})
    }
}
