//! A `tracing` subscriber that keeps the messages of `nemo_lens` events,
//! for tests of what the library says.

use std::sync::{Arc, Mutex};

/// Keeps the messages of `nemo_lens` events, each as `LEVEL message`.
#[derive(Clone, Default)]
pub struct Messages(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for Messages {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "nemo_lens"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Message<'a>(&'a mut String);
        impl tracing::field::Visit for Message<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    *self.0 = format!("{value:?}");
                }
            }
        }
        let mut text = format!("{} ", event.metadata().level());
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        text.push_str(&message);
        self.0.lock().unwrap().push(text);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

impl Messages {
    /// What was said so far, in order.
    pub fn said(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}
