//! [`SchedulingMetrics`]: the routing and scheduling set.

use nemo_lens_macros::{AttributeValue, Instruments};

/// An inference engine's scheduler, as routers, autoscalers and dashboards
/// read it.
///
/// The request gauges are up-down counters: each request adds one while it
/// waits and one while it runs, and takes it back when it moves on, so
/// [`ScheduledRequest`](crate::serving::ScheduledRequest) records them
/// rather than the engine sampling its queue. Prometheus scrapes them as
/// the gauges `nemo_inference_requests_waiting` and
/// `nemo_inference_requests_running`; the KV-cache usage as
/// `nemo_inference_kv_cache_usage_ratio`.
///
/// ```
/// use nemo_lens::instruments::serving::SchedulingMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// let meter = Meter::noop();
/// // Once, at start-up: the KV cache's geometry.
/// SchedulingMetrics::default().kv_cache_block_size(16).kv_cache_blocks(8192).record(&meter);
/// // Whenever the engine allocates or frees blocks.
/// SchedulingMetrics::default().kv_cache_usage(0.42).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct SchedulingMetrics {
    /// Requests waiting in the scheduler's queue to start running.
    #[up_down_counter("nemo.inference.requests.waiting", unit = "{request}")]
    pub requests_waiting: Option<i64>,

    /// Requests running: their prompt being processed or their tokens being generated.
    #[up_down_counter("nemo.inference.requests.running", unit = "{request}")]
    pub requests_running: Option<i64>,

    /// Fraction of the KV cache in use, from 0 (empty) to 1 (full).
    #[gauge("nemo.inference.kv_cache.usage", unit = "1")]
    pub kv_cache_usage: Option<f64>,

    /// Time a request waited in the queue before it started running.
    #[histogram(
        "nemo.inference.request.queue.duration",
        unit = "s",
        buckets = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
    )]
    pub queue_s: Option<f64>,

    /// Time from a request starting to run to its first token: the prompt's prefill.
    #[histogram(
        "nemo.inference.request.prefill.duration",
        unit = "s",
        buckets = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
    )]
    pub prefill_s: Option<f64>,

    /// Time from a request's first token to its last: the decode.
    #[histogram(
        "nemo.inference.request.decode.duration",
        unit = "s",
        buckets = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
    )]
    pub decode_s: Option<f64>,

    /// Requests that left the engine, by finish reason.
    #[counter("nemo.inference.requests.finished", unit = "{request}")]
    pub finished: Option<u64>,

    /// Prompt tokens looked up in the prefix cache.
    #[counter("nemo.inference.prefix_cache.queries", unit = "{token}")]
    pub prefix_cache_queries: Option<u64>,

    /// Prompt tokens found in the prefix cache.
    #[counter("nemo.inference.prefix_cache.hits", unit = "{token}")]
    pub prefix_cache_hits: Option<u64>,

    /// Tokens one KV-cache block holds.
    #[gauge("nemo.inference.kv_cache.block_size", unit = "{token}")]
    pub kv_cache_block_size: Option<u64>,

    /// KV-cache blocks the engine allocated (on its GPUs).
    #[gauge("nemo.inference.kv_cache.blocks", unit = "{block}")]
    pub kv_cache_blocks: Option<u64>,

    /// Why a request finished, attached as `nemo.inference.finish_reason` to
    /// the finished count only.
    #[attribute("nemo.inference.finish_reason", only(finished))]
    pub finish_reason: Option<FinishReason>,
}

/// Why a request left the engine (`nemo.inference.finish_reason`), as vLLM
/// reports it.
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum FinishReason {
    /// The model produced a stop token or sequence.
    Stop,
    /// The request reached its token limit.
    Length,
    /// The request was aborted: its client went away, or it was cancelled
    /// or dropped before finishing.
    Abort,
    /// The engine failed the request (or panicked while running it).
    Error,
}
