//! A tower layer that records the GenAI server metrics of an
//! OpenAI-compatible HTTP API, for axum or any tower service:
//! [`OpenAiLayer`]. Use it through `nemo_lens::openai` (cargo feature
//! `openai`).
//!
//! - [`layer`]: the layer and its configuration;
//! - [`service`]: the service it wraps around yours;
//! - [`body`]: the bodies it reads as they pass;
//! - [`recording`]: what one request showed, and what is recorded when it ends;
//! - [`json`], [`sse`], [`chunk`]: reading JSON documents and event streams
//!   incrementally, and glancing at a streamed chunk;
//! - [`responses`], [`messages`]: what is particular to OpenAI's Responses
//!   and Anthropic's Messages events.

#![warn(missing_docs)]
// The module links are for maintainers, who read this crate with
// `cargo doc --document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

mod body;
mod chunk;
mod config;
mod json;
mod layer;
mod messages;
#[cfg(test)]
mod properties;
mod recording;
mod responses;
mod service;
mod sse;

pub use body::{MeteredBody, RequestBody};
pub use layer::{OpenAiLayer, UNDECLARED_MODEL};
pub use recording::{BODY_ERROR, CANCELLED, ERROR_EVENT};
pub use service::{OpenAiService, ResponseFuture};
