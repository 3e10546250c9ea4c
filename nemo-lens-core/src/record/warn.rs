//! Warnings of the record path: dropped measurements (rate-limited) and
//! required attributes left unset (once).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use super::Reject;

/// At most one warning per set in this many seconds; the rest are counted.
const WARN_EVERY_SECS: u64 = 10;

/// Counts the measurements a set dropped and warns about them through
/// `tracing`, at most once every ten seconds per set.
#[derive(Debug, Default)]
pub struct DropWarnings {
    /// Seconds since [`epoch`] at which the next warning may be emitted.
    next_warn_at: AtomicU64,
    suppressed: AtomicU64,
    dropped: AtomicU64,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl DropWarnings {
    /// A counter with nothing dropped yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many measurements this set has dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Notes that `field`'s measurement for `instrument` was dropped.
    #[cold]
    pub fn dropped_value(
        &self,
        field: &'static str,
        instrument: &'static str,
        value: &dyn std::fmt::Debug,
        reason: Reject,
    ) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        let now = epoch().elapsed().as_secs();
        let next = self.next_warn_at.load(Ordering::Relaxed);
        let claimed = now >= next
            && self
                .next_warn_at
                .compare_exchange(
                    next,
                    now + WARN_EVERY_SECS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok();
        if claimed {
            let suppressed = self.suppressed.swap(0, Ordering::Relaxed);
            crate::warnings::emit(crate::warnings::Warning::DroppedValue, || {
                tracing::warn!(
                    target: "nemo_lens",
                    field,
                    instrument,
                    value = ?value,
                    suppressed,
                    "nemo-lens dropped a measurement: {reason}"
                );
            });
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// An attribute a set declares `required`, found unset on a record: said
/// once per attribute per process, naming it and the setter that sets it.
/// The record still goes out, without the label: nothing recorded is lost.
#[derive(Debug)]
pub struct MissingAttribute {
    set: &'static str,
    key: &'static str,
    setter: &'static str,
    said: AtomicBool,
}

impl MissingAttribute {
    /// The note for attribute `key` of `set`, set with `setter`.
    pub const fn new(set: &'static str, key: &'static str, setter: &'static str) -> Self {
        MissingAttribute {
            set,
            key,
            setter,
            said: AtomicBool::new(false),
        }
    }

    /// Notes a record without the attribute: the first one warns.
    #[inline]
    pub fn note(&self) {
        if !self.said.load(Ordering::Relaxed) {
            self.say();
        }
    }

    #[cold]
    fn say(&self) {
        if self.said.swap(true, Ordering::Relaxed) {
            return;
        }
        let MissingAttribute {
            set, key, setter, ..
        } = *self;
        crate::warnings::emit(crate::warnings::Warning::MissingAttribute, || {
            tracing::warn!(
                target: "nemo_lens",
                set,
                attribute = key,
                "{set} was recorded without {key}, which it needs: set it with `.{setter}(..)` \
                 (this record and any other without it go out without the label; said once)"
            );
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts `nemo_lens` warnings, the only thing these tests emit.
    struct CountWarnings(std::sync::Arc<AtomicU64>);

    impl tracing::Subscriber for CountWarnings {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let meta = event.metadata();
            if meta.target() == "nemo_lens" && *meta.level() == tracing::Level::WARN {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn warns_through_tracing_once_per_window() {
        let warned = std::sync::Arc::new(AtomicU64::new(0));
        let subscriber = CountWarnings(warned.clone());
        tracing::subscriber::with_default(subscriber, || {
            let warnings = DropWarnings::new();
            for _ in 0..100 {
                warnings.dropped_value("loss", "train.loss", &f64::INFINITY, Reject::NonFinite);
            }
        });
        assert_eq!(warned.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn counts_every_drop_but_warns_once_per_window() {
        let warnings = DropWarnings::new();
        for _ in 0..5 {
            warnings.dropped_value("loss", "train.loss", &f64::NAN, Reject::NonFinite);
        }
        assert_eq!(warnings.dropped(), 5);
        assert_eq!(warnings.suppressed.load(Ordering::Relaxed), 4);
    }
}
