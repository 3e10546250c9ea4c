//! The span a record belongs to: the current OpenTelemetry context's, or
//! one named for a stretch of code.

use std::cell::Cell;
use std::mem::MaybeUninit;

use opentelemetry::trace::{SpanId, TraceContextExt, TraceId};
use opentelemetry::Context;

/// A span's trace id and span id: what an exemplar links to.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanIds {
    trace_id: u128,
    span_id: u64,
}

impl SpanIds {
    /// The ids of a span.
    pub fn new(trace_id: TraceId, span_id: SpanId) -> Self {
        SpanIds {
            trace_id: u128::from_be_bytes(trace_id.to_bytes()),
            span_id: u64::from_be_bytes(span_id.to_bytes()),
        }
    }

    pub(crate) fn from_raw(trace_id: u128, span_id: u64) -> Self {
        SpanIds { trace_id, span_id }
    }

    pub(crate) fn raw(self) -> (u128, u64) {
        (self.trace_id, self.span_id)
    }

    /// The trace id.
    pub fn trace_id(self) -> TraceId {
        TraceId::from(self.trace_id)
    }

    /// The span id.
    pub fn span_id(self) -> SpanId {
        SpanId::from(self.span_id)
    }

    /// The ids of `cx`'s span if it is sampled.
    pub fn sampled_in(cx: &Context) -> Option<SpanIds> {
        let span = cx.span();
        let context = span.span_context();
        (context.is_sampled() && context.is_valid())
            .then(|| SpanIds::new(context.trace_id(), context.span_id()))
    }
}

impl std::fmt::Debug for SpanIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpanIds({:032x}/{:016x})", self.trace_id, self.span_id)
    }
}

thread_local! {
    /// Whether [`in_span`] names the span on this thread: a flag of its
    /// own, so the usual record (nothing named) reads one byte.
    static NAMING: Cell<bool> = const { Cell::new(false) };
    /// The span named, or no sampled span at all.
    static NAMED: Cell<Option<SpanIds>> = const { Cell::new(None) };
}

/// The sampled span a record made now belongs to: the one [`in_span`] or
/// [`in_context`] names, else the current OpenTelemetry context's (about a
/// nanosecond: a thread-local read, no lock, no clone).
#[inline]
pub fn current() -> Option<SpanIds> {
    if NAMING.with(Cell::get) {
        return NAMED.with(Cell::get);
    }
    Context::map_current(|cx| {
        if cx.has_active_span() {
            SpanIds::sampled_in(cx)
        } else {
            None
        }
    })
}

/// The sampled span of one record call, read at most once however many
/// histograms the call records: a set's `record` reads the context for its
/// first histogram and hands the answer to the others.
///
/// ```
/// use nemo_lens::cells::Histogram;
/// use nemo_lens::exemplar::{self, ExemplarFilter, SpanIds, SpanOnce};
/// use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
///
/// let ttft = Histogram::<f64>::with_exemplars([0.1].into(), ExemplarFilter::TraceBased);
/// let e2e = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::TraceBased);
/// let request = SpanIds::new(TraceId::from(0xab_u128), SpanId::from(0xcd_u64));
/// exemplar::in_span(Some(request), || {
///     let span = SpanOnce::new();
///     ttft.record_in(0.05, &span); // reads the context
///     e2e.record_in(0.4, &span); // does not
/// });
/// assert_eq!(e2e.exemplars()[0].span, Some(request));
/// ```
#[derive(Debug)]
pub struct SpanOnce {
    /// [`UNREAD`], [`NO_SPAN`] or [`SAMPLED`].
    state: Cell<u8>,
    /// The span, written when `state` says [`SAMPLED`] (left unwritten
    /// otherwise, so a record call that reads no span writes one byte).
    span: Cell<MaybeUninit<SpanIds>>,
}

const UNREAD: u8 = 0;
const NO_SPAN: u8 = 1;
const SAMPLED: u8 = 2;

impl Default for SpanOnce {
    fn default() -> Self {
        Self::new()
    }
}

impl SpanOnce {
    /// Nothing read yet.
    #[inline]
    pub const fn new() -> Self {
        SpanOnce {
            state: Cell::new(UNREAD),
            span: Cell::new(MaybeUninit::uninit()),
        }
    }

    /// [`current`], read on the first call only.
    #[inline]
    pub fn get(&self) -> Option<SpanIds> {
        // SAFETY: `read` writes the span before it says SAMPLED.
        (self.read() == SAMPLED).then(|| unsafe { self.span.get().assume_init() })
    }

    /// Whether a sampled span is current, read on the first call only.
    #[inline]
    pub(crate) fn is_sampled(&self) -> bool {
        self.read() == SAMPLED
    }

    #[inline]
    fn read(&self) -> u8 {
        let state = self.state.get();
        if state != UNREAD {
            return state;
        }
        let state = match current() {
            Some(ids) => {
                self.span.set(MaybeUninit::new(ids));
                SAMPLED
            }
            None => NO_SPAN,
        };
        self.state.set(state);
        state
    }
}

/// Runs `f` with `span` as the span its records belong to, whatever the
/// current context says (`None`: no sampled span). For records made outside
/// the request's span: a completion callback, a streaming task, a
/// measurement taken after the span ended.
pub fn in_span<R>(span: Option<SpanIds>, f: impl FnOnce() -> R) -> R {
    /// What was named before, put back however `f` ends.
    struct Restore(bool, Option<SpanIds>);
    impl Drop for Restore {
        fn drop(&mut self) {
            NAMING.with(|naming| naming.set(self.0));
            NAMED.with(|named| named.set(self.1));
        }
    }
    let _restore = Restore(
        NAMING.with(|naming| naming.replace(true)),
        NAMED.with(|named| named.replace(span)),
    );
    f()
}

/// Runs `f` with the span of `cx` (if sampled) as the span its records
/// belong to: the explicit form of a context for code that holds one.
///
/// ```
/// use nemo_lens::exemplar;
/// use nemo_lens::opentelemetry::Context;
///
/// // A context without a span: records in `f` leave no trace-based exemplar.
/// exemplar::in_context(&Context::new(), || assert_eq!(exemplar::current(), None));
/// ```
pub fn in_context<R>(cx: &Context, f: impl FnOnce() -> R) -> R {
    in_span(SpanIds::sampled_in(cx), f)
}

/// The span current when something started, kept to name it when that
/// thing records later (what a guard holds): [`Captured::now`] then
/// [`Captured::scope`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Captured(Option<SpanIds>);

impl Captured {
    /// The sampled span current now, if any.
    #[inline]
    pub fn now() -> Self {
        Captured(current())
    }

    /// Nothing captured: records in [`scope`](Self::scope) read the
    /// context current then.
    pub const fn none() -> Self {
        Captured(None)
    }

    /// `span`, captured: what a layer that learns the request's span after
    /// its start links its records to.
    pub const fn of(span: SpanIds) -> Self {
        Captured(Some(span))
    }

    /// The span captured.
    pub fn span(self) -> Option<SpanIds> {
        self.0
    }

    /// Runs `f` with the captured span as the one its records belong to; a
    /// capture of no span leaves the current context in charge, so a guard
    /// started outside any span and ended inside one links to that.
    #[inline]
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        match self.0 {
            Some(span) => in_span(Some(span), f),
            None => f(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, TraceFlags, TraceState};

    fn context(sampled: bool) -> (Context, SpanIds) {
        let ids = SpanIds::new(
            TraceId::from(0x0af7651916cd43dd8448eb211c80319c_u128),
            SpanId::from(0xb7ad6b7169203331_u64),
        );
        let flags = if sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let span = SpanContext::new(
            ids.trace_id(),
            ids.span_id(),
            flags,
            true,
            TraceState::default(),
        );
        (Context::new().with_remote_span_context(span), ids)
    }

    #[test]
    fn the_current_context_names_its_sampled_span_only() {
        assert_eq!(current(), None);
        let (sampled, ids) = context(true);
        {
            let _attached = sampled.attach();
            assert_eq!(current(), Some(ids));
            // A capture keeps it after the span is no longer current.
            let captured = Captured::now();
            drop(_attached);
            assert_eq!(current(), None);
            captured.scope(|| assert_eq!(current(), Some(ids)));
        }
        let (unsampled, _) = context(false);
        let _attached = unsampled.attach();
        assert_eq!(current(), None);
    }

    #[test]
    fn a_named_span_wins_over_the_context_and_is_undone_after() {
        let (sampled, ids) = context(true);
        let _attached = sampled.attach();
        in_span(None, || assert_eq!(current(), None));
        assert_eq!(current(), Some(ids));
        in_context(&Context::new(), || assert_eq!(current(), None));
        let other = SpanIds::from_raw(7, 9);
        in_span(Some(other), || {
            assert_eq!(current(), Some(other));
            in_span(Some(ids), || assert_eq!(current(), Some(ids)));
            assert_eq!(current(), Some(other));
        });
        assert_eq!(
            format!("{:?}", other),
            format!("SpanIds({:032x}/{:016x})", 7, 9)
        );
    }
}
