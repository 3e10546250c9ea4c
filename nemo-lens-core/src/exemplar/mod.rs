//! Exemplars: next to a histogram bucket's count, the trace and span of one
//! request that landed there, so a spike on a latency panel opens that
//! request's trace.
//!
//! Every histogram nemo-lens owns keeps them (derived and built-in sets,
//! guards, the OpenAI layer, runtime groups, the metrics bridge): explicit
//! buckets the latest per bucket, exponential ones the latest
//! [`EXPONENTIAL_RESERVOIR`]. Which records leave one is the
//! [`ExemplarFilter`] (`OTEL_METRICS_EXEMPLAR_FILTER`, `trace_based` by
//! default): with it, a record made while a sampled span is current.
//!
//! The span is read from the current OpenTelemetry
//! [`Context`](opentelemetry::Context) at the moment of the record, which
//! costs about a nanosecond; where no span is current, with the
//! `span-observer` feature (on by default), a thread-local byte kept by
//! `SpanObserver` says so instead. `tracing` users get it through
//! `tracing-opentelemetry` (0.34 activates each entered span's context, on by
//! default). A record made outside the request's span, in a callback or a
//! streaming task, can name the span with [`in_context`] or [`in_span`]; a
//! guard keeps the span that was current when it started.
//!
//! ```
//! use nemo_lens::exemplar::{self, SpanIds};
//! use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
//!
//! let request = SpanIds::new(TraceId::from(0x5b8e_u128), SpanId::from(0x11_u64));
//! // In a completion callback that runs outside the request's span:
//! exemplar::in_span(Some(request), || {
//!     // set.record(&meter): its histograms keep `request` as their exemplar.
//!     assert_eq!(exemplar::current(), Some(request));
//! });
//! assert_eq!(exemplar::current(), None);
//! ```

mod context;
mod filter;
mod observer;

pub use context::{current, in_context, in_span, Captured, SpanIds, SpanOnce};
pub(crate) use context::{learn_context, no_span_current};
pub use filter::{ExemplarFilter, OTEL_METRICS_EXEMPLAR_FILTER};
pub(crate) use observer::install as install_observer;
#[cfg(feature = "span-observer")]
pub use observer::SpanObserver;

use std::time::SystemTime;

use opentelemetry::trace::{SpanId, TraceId};

/// How many exemplars an exponential histogram series keeps: the
/// specification's `min(20, max buckets)`.
pub const EXPONENTIAL_RESERVOIR: usize = 20;

/// One exemplar: a recorded value, when it was recorded, and the span it
/// was recorded in (absent for a record outside any span that
/// [`ExemplarFilter::AlwaysOn`] kept).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exemplar {
    /// The value recorded.
    pub value: f64,
    /// When.
    pub time: SystemTime,
    /// The span current at the record.
    pub span: Option<SpanIds>,
}

impl Exemplar {
    /// The trace id as Prometheus and Grafana expect it: 32 lowercase hex
    /// digits.
    pub fn trace_id_hex(&self) -> Option<String> {
        self.span.map(|s| format!("{:032x}", s.trace_id()))
    }

    /// The span id: 16 lowercase hex digits.
    pub fn span_id_hex(&self) -> Option<String> {
        self.span.map(|s| format!("{:016x}", s.span_id()))
    }

    /// The trace id, if any.
    pub fn trace_id(&self) -> Option<TraceId> {
        self.span.map(|s| s.trace_id())
    }

    /// The span id, if any.
    pub fn span_id(&self) -> Option<SpanId> {
        self.span.map(|s| s.span_id())
    }
}
