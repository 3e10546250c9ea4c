//! The gauges routers and autoscalers read, and the scheduling timings of
//! an inference engine (`nemo.inference.*`).
//!
//! Every engine exports the same three numbers under its own names (vLLM's
//! `vllm:num_requests_waiting`, `vllm:num_requests_running` and
//! `vllm:kv_cache_usage_perc`), and Kubernetes' Gateway API Inference
//! Extension (the endpoint picker llm-d uses) routes on exactly those:
//! [`SchedulingMetrics`] declares them for a Rust server, with the queue,
//! prefill and decode timings, finished requests by [`FinishReason`], the
//! prefix cache and the KV-cache geometry. An engine drives the request
//! gauges through [`ScheduledRequest`], which keeps them right however a
//! request ends (finished, aborted, dropped by a cancelled task or a panic).
//!
//! The GenAI conventions define none of these (their open proposals #87 and
//! #408), so the names are nemo-lens's own, in one namespace.

mod metrics;
mod request;

pub use metrics::{FinishReason, SchedulingMetrics, SchedulingMetricsSet};
pub use request::ScheduledRequest;
