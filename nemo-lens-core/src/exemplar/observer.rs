//! Whether a span is current, kept per thread as contexts are attached and
//! detached, so that a record made with no span current (the common case
//! under `trace_based`) reads nothing of the OpenTelemetry context: a
//! histogram's owner thread then records with no exemplar code at all (see
//! `cells::owner`, whose thread word carries the flag this keeps).
//!
//! OpenTelemetry calls one process-wide [`ContextObserver`] on every attach
//! and detach (its `experimental_context_observer` feature, which the
//! `span-observer` feature switches on). nemo-lens installs [`SpanObserver`]
//! when the first histogram that keeps exemplars is made. A process that
//! installs an observer of its own first keeps it: its histogram records
//! then take the long way (a call each) and read the context, unless that
//! observer forwards to [`SpanObserver`] (see [`SpanObserver::forwarded`]).
//! An observer that forwards must not record into a histogram itself before
//! it has forwarded: OpenTelemetry calls it while the current context is
//! borrowed for the change, which a record that reads the context would
//! meet.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once an observer is seen to tell [`SpanObserver`] of this process's
/// attaches; never unset (an observer cannot be removed).
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Set once nemo-lens has tried to install [`SpanObserver`] (a histogram
/// that keeps exemplars was made), whether or not it became the process's.
static TRIED: AtomicBool = AtomicBool::new(false);

/// Whether a histogram that keeps exemplars was made in this process: until
/// then no record needs to know its span.
#[inline]
pub(super) fn tried() -> bool {
    TRIED.load(Ordering::Acquire)
}

/// Whether every attach and detach reaches [`SpanObserver`], so a thread
/// may trust what it last saw.
#[inline]
pub(super) fn watching() -> bool {
    WATCHING.load(Ordering::Acquire)
}

#[cfg(feature = "span-observer")]
pub use with_observer::SpanObserver;

#[cfg(feature = "span-observer")]
mod with_observer {
    use std::cell::Cell;
    use std::sync::{Arc, OnceLock};

    use opentelemetry::context::{ContextObserver, GlobalContextObserver, ObserverContextView};
    use opentelemetry::trace::TraceContextExt;
    use opentelemetry::Context;

    use super::{Ordering, WATCHING};
    use crate::exemplar::context::context_attached;

    thread_local! {
        /// Whether [`SpanObserver::install`] is asking, on this thread,
        /// whether the process's observer is this one (its `make_view`
        /// answers by clearing it).
        static ASKING: Cell<bool> = const { Cell::new(false) };
    }

    /// The context observer that keeps, per thread, whether the current
    /// OpenTelemetry context has a span.
    ///
    /// nemo-lens installs it itself. A process with a context observer of
    /// its own (installed first: the process has one) forwards the two
    /// calls to it and says so with [`forwarded`](Self::forwarded):
    ///
    /// ```
    /// use nemo_lens::exemplar::SpanObserver;
    /// use nemo_lens::opentelemetry::context::{ContextObserver, GlobalContextObserver};
    /// use nemo_lens::opentelemetry::Context;
    /// use std::sync::Arc;
    ///
    /// struct Profiler; // the process's own observer
    /// impl ContextObserver for Profiler {
    ///     fn on_context_enter(&self, from: &Context, to: &Context) {
    ///         SpanObserver.on_context_enter(from, to);
    ///         // ... what the profiler does
    ///     }
    ///     fn on_context_exit(&self, from: &Context, to: &Context) {
    ///         SpanObserver.on_context_exit(from, to);
    ///     }
    /// }
    /// GlobalContextObserver::set(Arc::new(Profiler));
    /// SpanObserver::forwarded();
    /// ```
    #[derive(Debug, Clone, Copy, Default)]
    pub struct SpanObserver;

    impl ContextObserver for SpanObserver {
        #[inline]
        fn on_context_enter(&self, _from: &Context, to: &Context) {
            context_attached(to.has_active_span());
        }

        #[inline]
        fn on_context_exit(&self, _from: &Context, to: &Context) {
            context_attached(to.has_active_span());
        }

        #[inline]
        fn make_view(&self, _cx: &Context) -> Option<Arc<dyn ObserverContextView>> {
            if ASKING.with(Cell::get) {
                ASKING.with(|asking| asking.set(false));
            }
            None
        }
    }

    impl SpanObserver {
        /// Installs it as the process's context observer unless one is
        /// installed already, and says whether it is the process's (then
        /// records made where no span is current skip the context read).
        /// What making the first histogram that keeps exemplars does;
        /// cheap after the first call.
        pub fn install() -> bool {
            static INSTALLED: OnceLock<bool> = OnceLock::new();
            *INSTALLED.get_or_init(|| {
                if !is_installed() {
                    // Refused, with OpenTelemetry's warning, when another
                    // is installed; asking again tells which.
                    GlobalContextObserver::set(Arc::new(SpanObserver));
                }
                let ours = is_installed();
                if ours {
                    watch();
                }
                // Release: a thread that sees it sees the outcome above.
                super::TRIED.store(true, Ordering::Release);
                ours
            })
        }

        /// Says that the process's own context observer forwards
        /// `on_context_enter` and `on_context_exit` to [`SpanObserver`],
        /// every call, from now on: records trust what it keeps.
        pub fn forwarded() {
            watch();
        }
    }

    fn watch() {
        // Release: a thread that sees it sees the observer installed.
        WATCHING.store(true, Ordering::Release);
    }

    /// Whether the process's observer is [`SpanObserver`]: a context made
    /// (not attached: that could meet a borrow of the current one, held
    /// where this runs inside `Context::map_current`) asks it for a view.
    pub(super) fn is_installed() -> bool {
        ASKING.with(|asking| asking.set(true));
        drop(Context::new().with_telemetry_suppressed());
        !ASKING.with(|asking| asking.replace(false))
    }
}

/// Installs the observer where the feature provides one: what making a
/// histogram that keeps exemplars does.
#[inline]
pub(crate) fn install() {
    #[cfg(feature = "span-observer")]
    SpanObserver::install();
}

#[cfg(all(test, feature = "span-observer"))]
mod tests {
    use opentelemetry::Context;

    use super::*;

    #[test]
    fn installed_once_and_asked_safely_inside_a_borrowed_context() {
        assert!(SpanObserver::install());
        assert!(watching());
        // A histogram made inside `Context::map_current` (a record of a new
        // series there) asks again without attaching anything.
        let (first, again) =
            Context::map_current(|_| (SpanObserver::install(), with_observer::is_installed()));
        assert!(first && again);
    }
}
