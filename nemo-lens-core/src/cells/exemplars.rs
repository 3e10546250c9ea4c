//! A histogram series' exemplars: a few slots, each one exemplar, written
//! only by records the [`ExemplarFilter`] keeps.
//!
//! A slot is a sequence lock: a writer makes the sequence odd, writes, and
//! makes it even again; a reader that sees it odd or changed reads again. A
//! writer that finds the slot being written drops its exemplar instead of
//! waiting (a reservoir may sample further, and the slot gets the next
//! one), so a record never spins on another's exemplar.
//!
//! A bucket's slot takes at most one exemplar per millisecond, the first of
//! it (the resolution of a Prometheus exemplar's timestamp), and a ring one
//! per `1 ms / slots`: under `always_on`, threads recording one series then
//! mostly read the slot's cache line rather than take it from each other,
//! and scale as the cells do.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::sync::{fence, AtomicU64, AtomicUsize, Ordering};
use crate::exemplar::{self, Exemplar, ExemplarFilter, SpanIds, SpanOnce};

/// The least time between two exemplars of one bucket's slot, or of a
/// whole ring.
const MIN_GAP_NANOS: u64 = 1_000_000;

/// One exemplar, on a cache line of its own.
#[repr(align(64))]
struct Slot {
    seq: AtomicU64,
    /// Nanoseconds since the epoch; 0 while empty.
    time: AtomicU64,
    value: AtomicU64,
    trace_high: AtomicU64,
    trace_low: AtomicU64,
    /// 0 without a span (no valid span id is 0).
    span: AtomicU64,
}

impl Slot {
    fn new() -> Self {
        Slot {
            seq: AtomicU64::new(0),
            time: AtomicU64::new(0),
            value: AtomicU64::new(0),
            trace_high: AtomicU64::new(0),
            trace_low: AtomicU64::new(0),
            span: AtomicU64::new(0),
        }
    }

    fn write(&self, value: f64, span: Option<SpanIds>, time: u64, gap: u64) {
        let held = self.time.load(Ordering::Relaxed);
        if time >= held && time - held < gap {
            return;
        }
        let seq = self.seq.load(Ordering::Relaxed);
        if seq & 1 == 1
            || self
                .seq
                .compare_exchange(seq, seq + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // Keeps the writes below after the odd sequence a reader checks.
        fence(Ordering::Release);
        let (trace, span_id) = span.map_or((0, 0), SpanIds::raw);
        self.time.store(time, Ordering::Relaxed);
        self.value.store(value.to_bits(), Ordering::Relaxed);
        self.trace_high
            .store((trace >> 64) as u64, Ordering::Relaxed);
        self.trace_low.store(trace as u64, Ordering::Relaxed);
        self.span.store(span_id, Ordering::Relaxed);
        self.seq.store(seq + 2, Ordering::Release);
    }

    fn read(&self) -> Option<Exemplar> {
        for _ in 0..64 {
            let before = self.seq.load(Ordering::Acquire);
            if before & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let time = self.time.load(Ordering::Relaxed);
            let value = f64::from_bits(self.value.load(Ordering::Relaxed));
            let trace = (u128::from(self.trace_high.load(Ordering::Relaxed)) << 64)
                | u128::from(self.trace_low.load(Ordering::Relaxed));
            let span = self.span.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) != before {
                continue;
            }
            if time == 0 {
                return None;
            }
            return Some(Exemplar {
                value,
                time: UNIX_EPOCH + Duration::from_nanos(time),
                span: (span != 0).then(|| SpanIds::from_raw(trace, span)),
            });
        }
        // Written without pause for 64 reads: the next collection has it.
        None
    }
}

/// Nanoseconds since the epoch, never 0 (an empty slot's time).
fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1)
    })
}

/// The exemplars of one series: one slot per explicit bucket (the latest
/// there), or a ring of the latest few for an exponential histogram.
pub(crate) struct Exemplars {
    filter: ExemplarFilter,
    slots: Box<[Slot]>,
    /// The ring's next slot; unused with one slot per bucket.
    next: AtomicUsize,
    /// When the ring last took an exemplar.
    last: AtomicU64,
}

impl Exemplars {
    /// `slots` exemplars kept under `filter`; `None` when the filter keeps
    /// none, so a series without exemplars holds no storage for them.
    pub(crate) fn new(filter: ExemplarFilter, slots: usize) -> Option<Box<Self>> {
        filter.is_on().then(|| {
            crate::exemplar::install_observer();
            Box::new(Exemplars {
                filter,
                slots: (0..slots.max(1)).map(|_| Slot::new()).collect(),
                next: AtomicUsize::new(0),
                last: AtomicU64::new(0),
            })
        })
    }

    /// Which records it keeps.
    pub(crate) fn filter(&self) -> ExemplarFilter {
        self.filter
    }

    /// Offers a record of `value` in bucket `index`, made in `span` (the
    /// record call's, or `None`: the context's now).
    #[inline]
    pub(crate) fn offer_at(&self, index: usize, value: f64, span: Option<&SpanOnce>) {
        // Only `always_on` and `trace_based` keep exemplars (see `new`).
        // The usual record (`trace_based`, no span current) is decided here
        // without a call, so the record that inlines this makes none but a
        // tail call: a call here made every record keep its value and
        // bucket in saved registers, 14 instructions, exemplar or not.
        if self.filter == ExemplarFilter::TraceBased && surely_none(span) {
            return;
        }
        self.offer_to_bucket(index, value, span);
    }

    #[inline(never)]
    pub(crate) fn offer_to_bucket(&self, index: usize, value: f64, span: Option<&SpanOnce>) {
        let Some(span) = self.sampled(span) else {
            return;
        };
        let slot = &self.slots[index % self.slots.len()];
        slot.write(value, span, now(), MIN_GAP_NANOS);
    }

    /// Offers a record of `value`, made in `span`, to the ring.
    #[inline]
    pub(crate) fn offer(&self, value: f64, span: Option<&SpanOnce>) {
        if self.filter == ExemplarFilter::TraceBased && surely_none(span) {
            return;
        }
        self.offer_to_ring(value, span);
    }

    /// `Some(span)` if the filter keeps a record made in `span`.
    fn sampled(&self, span: Option<&SpanOnce>) -> Option<Option<SpanIds>> {
        let span = match span {
            Some(span) => span.get(),
            None => exemplar::current(),
        };
        (self.filter == ExemplarFilter::AlwaysOn || span.is_some()).then_some(span)
    }

    #[inline(never)]
    fn offer_to_ring(&self, value: f64, span: Option<&SpanOnce>) {
        let Some(span) = self.sampled(span) else {
            return;
        };
        let time = now();
        let last = self.last.load(Ordering::Relaxed);
        let gap = MIN_GAP_NANOS / self.slots.len() as u64;
        if (time >= last && time - last < gap)
            || self
                .last
                .compare_exchange(last, time, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        self.slots[index % self.slots.len()].write(value, span, time, 0);
    }

    /// The exemplars held, oldest first.
    pub(crate) fn read(&self) -> Vec<Exemplar> {
        let mut held: Vec<Exemplar> = self.slots.iter().filter_map(Slot::read).collect();
        held.sort_by_key(|e| e.time);
        held
    }
}

/// Whether no sampled span is current, where that is known without a call:
/// `span` read before, or this thread's context known to have no span.
#[inline(always)]
fn surely_none(span: Option<&SpanOnce>) -> bool {
    match span {
        Some(span) => span.surely_none(),
        None => exemplar::no_span_current(),
    }
}

#[cfg(all(test, not(nemo_lens_loom)))]
mod tests {
    use super::*;
    use crate::exemplar;
    use std::time::Duration;

    #[test]
    fn the_latest_per_slot_is_kept_and_read_whole() {
        let exemplars = Exemplars::new(ExemplarFilter::AlwaysOn, 3).unwrap();
        let span = SpanIds::from_raw(0xabc, 0x12);
        exemplar::in_span(Some(span), || {
            exemplars.offer_to_bucket(0, 0.1, None);
            // Within the millisecond: the first is kept.
            exemplars.offer_to_bucket(0, 0.15, None);
            std::thread::sleep(Duration::from_millis(2));
            exemplars.offer_to_bucket(0, 0.2, None);
            exemplars.offer_to_bucket(2, 7.0, None);
        });
        let held = exemplars.read();
        assert_eq!(held.len(), 2);
        assert_eq!((held[0].value, held[0].span), (0.2, Some(span)));
        assert_eq!((held[1].value, held[1].span), (7.0, Some(span)));
        assert!(Exemplars::new(ExemplarFilter::AlwaysOff, 3).is_none());
    }

    #[test]
    fn trace_based_keeps_only_records_in_a_sampled_span() {
        let exemplars = Exemplars::new(ExemplarFilter::TraceBased, 4).unwrap();
        exemplars.offer(1.0, None);
        assert!(exemplars.read().is_empty());
        exemplar::in_span(Some(SpanIds::from_raw(1, 2)), || exemplars.offer(2.0, None));
        exemplars.offer(3.0, None);
        let held = exemplars.read();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].value, 2.0);
    }

    #[test]
    fn a_ring_keeps_the_latest() {
        let exemplars = Exemplars::new(ExemplarFilter::AlwaysOn, 3).unwrap();
        for i in 0..10 {
            std::thread::sleep(Duration::from_millis(1));
            exemplars.offer(f64::from(i), None);
        }
        // Within the ring's gap (1 ms / 3 slots) a record is not kept.
        exemplars.offer(10.0, None);
        let values: Vec<f64> = exemplars.read().iter().map(|e| e.value).collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(sorted, [7.0, 8.0, 9.0]);
        assert!(exemplars.read().iter().all(|e| e.span.is_none()));
    }

    #[test]
    fn readers_never_see_half_an_exemplar() {
        let exemplars = std::sync::Arc::new(Exemplars::new(ExemplarFilter::AlwaysOn, 1).unwrap());
        let writer = {
            let exemplars = exemplars.clone();
            std::thread::spawn(move || {
                for i in 1..=2_000_u64 {
                    // Trace, span and value move together: a torn read would
                    // mix them.
                    let span = SpanIds::from_raw(u128::from(i) << 64 | u128::from(i), i);
                    exemplar::in_span(Some(span), || exemplars.offer_to_bucket(0, i as f64, None));
                    // Past the slot's gap, so each is written.
                    std::thread::sleep(Duration::from_micros(1_050));
                }
            })
        };
        let mut seen = 0;
        while !writer.is_finished() && seen < 10_000_000 {
            for e in exemplars.read() {
                let (trace, span) = e.span.unwrap().raw();
                assert_eq!(span as f64, e.value);
                assert_eq!(trace, u128::from(span) << 64 | u128::from(span));
                seen += 1;
            }
        }
        writer.join().unwrap();
        assert_eq!(exemplars.read()[0].value, 2_000.0);
    }
}
