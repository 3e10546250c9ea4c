//! What every API's reply is made of: the request's identity and token
//! counts, and the formats that write it streamed or whole.

use axum::body::Bytes;
use serde_json::Value;

/// One reply's identity and token counts.
pub struct Reply {
    pub id: String,
    pub model: String,
    pub created: u64,
    pub prompt_tokens: u64,
    /// Prompt tokens served from the toy prefix cache.
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// How one API writes a generated reply.
pub trait Format: Send {
    /// Events sent as soon as the stream opens, before any word.
    fn opening(&mut self, reply: &Reply) -> Vec<Bytes>;
    /// The event carrying one generated word (`last` for the final one).
    fn word(&mut self, reply: &Reply, text: &str, last: bool) -> Bytes;
    /// Events after the last word: usage and the end of the stream.
    fn closing(&mut self, reply: &Reply, text: &str) -> Vec<Bytes>;
    /// The whole reply, not streamed.
    fn whole(&self, reply: &Reply, text: &str) -> Value;
}

/// An SSE event with only `data`.
pub fn data(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// An SSE event named by its JSON's `type`, as the Responses and Messages
/// APIs write them.
pub fn typed(value: &Value) -> Bytes {
    let kind = value["type"].as_str().unwrap_or("message");
    Bytes::from(format!("event: {kind}\ndata: {value}\n\n"))
}
