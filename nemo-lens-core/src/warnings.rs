//! Where the library's warnings go: through `tracing` when a subscriber
//! would receive them, else to stderr, once per kind per process.
//!
//! The first programs in the docs install no subscriber, and a warning that
//! only `tracing` carries (a value dropped, a series overflowing, exports
//! failing) is then silent exactly when a newcomer needs it. With a
//! subscriber nothing changes: every warning goes through it, rate-limited
//! where it is emitted.

use std::fmt;
use std::io::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The kinds of warning, each said on stderr at most once per process when
/// no subscriber listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Warning {
    /// A measurement was dropped (a value a set or group refuses).
    DroppedValue,
    /// An instrument passed the cardinality limit.
    CardinalityOverflow,
    /// A metric group was used against its spec.
    Group,
    /// An export failed, or shutting telemetry down did.
    Export,
    /// Two instruments claim one exported name.
    NameConflict,
    /// An endpoint was bound where others can reach it.
    Exposure,
    /// A sampler could not start.
    Sampler,
    /// A setting names something nemo-lens does not know.
    Setting,
    /// A set was recorded without an attribute it declares `required`.
    MissingAttribute,
}

/// Kinds already said on stderr, one bit each.
static SAID: AtomicU32 = AtomicU32::new(0);

/// Whether a `tracing` event emitted on this thread reaches a subscriber:
/// the thread's default, else the global one.
pub fn subscribed() -> bool {
    tracing::dispatcher::get_default(|dispatch| !dispatch.is::<tracing::subscriber::NoSubscriber>())
}

/// Emits a warning: `event` (a `tracing::warn!`) runs as it is when a
/// subscriber listens. Otherwise, the first warning of `kind` in the process
/// is written to stderr (the event formatted by a subscriber of this
/// module's own, message then fields) and later ones are not.
pub fn emit(kind: Warning, event: impl FnOnce()) {
    if subscribed() {
        event();
        return;
    }
    let bit = 1 << kind as u32;
    if SAID.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
        return;
    }
    let line = Arc::new(Mutex::new(String::new()));
    tracing::subscriber::with_default(
        Line {
            text: Arc::clone(&line),
        },
        event,
    );
    let line = line.lock().unwrap_or_else(PoisonError::into_inner);
    // A closed stderr is no reason to fail the caller.
    let _ = writeln!(
        std::io::stderr().lock(),
        "nemo-lens warning: {line}\n  (further warnings of this kind are not shown: install a \
         tracing subscriber, e.g. tracing_subscriber::fmt::init(), to see each one)",
    );
}

/// Formats the one event it is given: the message, then `key=value` for
/// each other field.
struct Line {
    text: Arc<Mutex<String>>,
}

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.rest.push(format!("{}={value:?}", field.name()));
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.rest.push(format!("{}={value}", field.name()));
        }
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    rest: Vec<String>,
}

impl tracing::Subscriber for Line {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut text = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        *text = fields.message;
        if !fields.rest.is_empty() {
            text.push_str(&format!(" ({})", fields.rest.join(", ")));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_line_holds_the_message_and_the_fields() {
        let line = Arc::new(Mutex::new(String::new()));
        let subscriber = Line {
            text: Arc::clone(&line),
        };
        tracing::subscriber::with_default(subscriber, || {
            let limit = 4;
            tracing::warn!(target: "nemo_lens", instrument = "a.b", limit, "over {limit}");
        });
        assert_eq!(*line.lock().unwrap(), "over 4 (instrument=a.b, limit=4)");
    }

    #[test]
    fn a_subscriber_takes_the_warning() {
        let subscriber = tracing::subscriber::NoSubscriber::default();
        // NoSubscriber installed on purpose is still no subscriber.
        tracing::subscriber::with_default(subscriber, || assert!(!subscribed()));
        let dispatch = tracing::Dispatch::new(Line {
            text: Arc::default(),
        });
        tracing::dispatcher::with_default(&dispatch, || {
            assert!(subscribed());
            let mut ran = false;
            emit(Warning::Sampler, || ran = true);
            assert!(ran, "the event goes to the subscriber");
        });
    }
}
