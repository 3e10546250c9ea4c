//! The span a record belongs to: the current OpenTelemetry context's, or
//! one named for a stretch of code.

use std::cell::Cell;
use std::mem::MaybeUninit;

use opentelemetry::trace::{SpanId, TraceContextExt, TraceId};
use opentelemetry::Context;

use crate::cells::owner;

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
    /// What this thread knows of the span its records belong to, in one
    /// byte so that the usual record (no span current, nothing named) reads
    /// nothing else: whether [`in_span`] names one ([`NAMING`]) and what the
    /// context observer last saw attached ([`CONTEXT_UNKNOWN`],
    /// [`CONTEXT_NO_SPAN`], [`CONTEXT_SPAN`]).
    static STATE: Cell<u8> = const { Cell::new(CONTEXT_UNKNOWN) };
    /// The span named, or no sampled span at all.
    static NAMED: Cell<Option<SpanIds>> = const { Cell::new(None) };
}

/// Whether the current context has a span is not known on this thread:
/// read it (no observer, or none seen here yet).
const CONTEXT_UNKNOWN: u8 = 0;
/// The current context has no span: nothing to read.
const CONTEXT_NO_SPAN: u8 = 1;
/// The current context has a span: read whether it is sampled.
const CONTEXT_SPAN: u8 = 2;
/// The two bits above.
const CONTEXT: u8 = 3;
/// [`in_span`] names the span.
const NAMING: u8 = 4;

/// Sets what this thread knows, and the thread word's flag that sends a
/// histogram record the long way unless no span can be current (see
/// `cells::owner`): the one place either is written.
#[inline]
fn set_state(state: u8) {
    STATE.with(|cell| cell.set(state));
    owner::look(state != CONTEXT_NO_SPAN);
}

/// What the observer saw attached on this thread: a context with a span
/// or without.
#[inline]
pub(super) fn context_attached(has_span: bool) {
    let known = if has_span {
        CONTEXT_SPAN
    } else {
        CONTEXT_NO_SPAN
    };
    set_state((STATE.with(Cell::get) & NAMING) | known);
}

/// Learns whether this thread's context has a span if nothing has told it
/// yet (a histogram record that is not its owner's plain one calls this):
/// from then on the observer keeps it. Before any histogram keeps exemplars
/// (making one installs the observer) there is nothing to learn for: no
/// record needs the span, and the thread's word stays without
/// [`LOOK`](owner::LOOK); a series that keeps exemplars is first recorded
/// the long way, which learns. Where another observer is the process's, the
/// thread stays unknowing and its records keep looking.
#[inline]
pub(crate) fn learn_context() {
    if STATE.with(Cell::get) != CONTEXT_UNKNOWN {
        return;
    }
    learn_slowly();
}

#[cold]
fn learn_slowly() {
    if super::observer::watching() {
        Context::map_current(|cx| context_attached(cx.has_active_span()));
    } else if super::observer::tried() {
        owner::look(true);
    }
}

/// Whether this thread's context is known to have no span and none is
/// named: one byte, no call (false where it is not known).
#[inline(always)]
pub(crate) fn no_span_current() -> bool {
    STATE.with(Cell::get) == CONTEXT_NO_SPAN
}

/// The sampled span a record made now belongs to: the one [`in_span`] or
/// [`in_context`] names, else the current OpenTelemetry context's.
///
/// With the context observer (the `span-observer` feature, on by default)
/// a thread whose context has no span answers from one thread-local byte;
/// otherwise this reads the context (about a nanosecond: a thread-local
/// read, no lock, no clone).
#[inline]
pub fn current() -> Option<SpanIds> {
    let state = STATE.with(Cell::get);
    if state == CONTEXT_NO_SPAN {
        return None;
    }
    if state & NAMING != 0 {
        return NAMED.with(Cell::get);
    }
    from_context(state)
}

fn from_context(state: u8) -> Option<SpanIds> {
    Context::map_current(|cx| {
        let has_span = cx.has_active_span();
        // Learnt once per thread: from here on the observer tells every
        // change (it sees each attach and detach on every thread).
        if state == CONTEXT_UNKNOWN && super::observer::watching() {
            context_attached(has_span);
        }
        if has_span {
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
/// It belongs to one call, made and used in one context: a record checks
/// the context it runs in before it looks at the `SpanOnce` (where no span
/// is current there, the series' owner records without an exemplar), so
/// one carried out of the span it was read in is not a way to name that
/// span; [`in_span`] is.
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

    /// Whether no sampled span is current, answered only where that takes
    /// no call: read before, or this thread's context known to have no span.
    #[inline(always)]
    pub(crate) fn surely_none(&self) -> bool {
        match self.state.get() {
            UNREAD => {
                let none = no_span_current();
                if none {
                    // The record call's other histograms read this, not
                    // the thread-local.
                    self.state.set(NO_SPAN);
                }
                none
            }
            state => state == NO_SPAN,
        }
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
    /// What was named before, put back however `f` ends; only the naming
    /// bit, since the context's may have changed in `f`.
    struct Restore(u8, Option<SpanIds>);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_state((STATE.with(Cell::get) & CONTEXT) | self.0);
            NAMED.with(|named| named.set(self.1));
        }
    }
    let state = STATE.with(Cell::get);
    let _restore = Restore(state & NAMING, NAMED.with(|named| named.replace(span)));
    set_state(state | NAMING);
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

    /// What the observer keeps, checked on a thread of its own (a fresh
    /// byte) with and without the observer installed.
    fn the_state_follows_attaches_and_detaches() {
        let (sampled, ids) = context(true);
        let (unsampled, _) = context(false);
        assert_eq!(current(), None);
        {
            let _outer = sampled.clone().attach();
            assert_eq!(current(), Some(ids));
            {
                let _inner = Context::new().attach();
                assert_eq!(current(), None);
                let _unsampled = unsampled.attach();
                assert_eq!(current(), None);
            }
            assert_eq!(current(), Some(ids));
        }
        assert_eq!(current(), None);
        // A guard that outlives `in_span` (attached inside it): restoring
        // the name must not restore what was known of the context then.
        let guard = in_span(None, || {
            let guard = sampled.clone().attach();
            assert_eq!(current(), None);
            guard
        });
        assert_eq!(current(), Some(ids));
        drop(guard);
        assert_eq!(current(), None);
        // Out of order: the inner guard dropped first leaves the outer
        // context current until the outer one goes.
        let outer = sampled.clone().attach();
        let inner = Context::new().attach();
        drop(outer);
        assert_eq!(current(), None);
        drop(inner);
        assert_eq!(current(), None);
    }

    #[test]
    fn records_find_the_span_whether_or_not_contexts_are_observed() {
        std::thread::spawn(the_state_follows_attaches_and_detaches)
            .join()
            .unwrap();
        #[cfg(feature = "span-observer")]
        {
            assert!(super::super::SpanObserver::install());
            std::thread::spawn(the_state_follows_attaches_and_detaches)
                .join()
                .unwrap();
            // A span attached before this thread's state was learnt (as on
            // a thread that attached before the observer was installed).
            std::thread::spawn(|| {
                let (sampled, ids) = context(true);
                let _attached = sampled.attach();
                set_state(CONTEXT_UNKNOWN);
                assert_eq!(current(), Some(ids));
                assert_eq!(STATE.with(Cell::get), CONTEXT_SPAN);
                drop(_attached);
                assert_eq!(STATE.with(Cell::get), CONTEXT_NO_SPAN);
                assert_eq!(current(), None);
            })
            .join()
            .unwrap();
        }
    }
}
