//! `/v1/embeddings`: one toy vector per input, from its words.

use serde_json::{json, Value};

use super::reply::Reply;

/// Dimensions of the toy vectors.
const DIMENSIONS: usize = 8;

/// The inputs of an embeddings request: a string or a list of strings.
pub fn inputs(input: Option<&Value>) -> Vec<String> {
    match input {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map_or_else(|| item.to_string(), str::to_owned)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A unit vector that depends only on the text's words (FNV-1a hashed into
/// the dimensions), so the same input always embeds the same.
fn embed(text: &str) -> Vec<f64> {
    let mut vector = [0.0f64; DIMENSIONS];
    for word in text.split_whitespace() {
        let hash = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        vector[(hash % DIMENSIONS as u64) as usize] += if hash & 1 == 0 { 1.0 } else { -1.0 };
    }
    let norm = vector.iter().map(|x| x * x).sum::<f64>().sqrt().max(1.0);
    vector.iter().map(|x| x / norm).collect()
}

/// The reply to an embeddings request.
pub fn reply(reply: &Reply, inputs: &[String]) -> Value {
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
        .collect();
    json!({"object": "list", "data": data, "model": reply.model,
           "usage": {"prompt_tokens": reply.prompt_tokens, "total_tokens": reply.prompt_tokens}})
}
