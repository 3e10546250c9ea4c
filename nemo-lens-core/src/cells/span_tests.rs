//! A histogram's owner records the plain way only where no exemplar can be
//! due: these check that every record that is due one keeps it, whichever
//! way the thread's word sends it. Each runs on a thread of its own, so the
//! thread's word and what it knows of its context start fresh.

use std::time::Duration;

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;

use super::owner;
use super::Histogram;
use crate::exemplar::{self, ExemplarFilter, SpanIds};

fn sampled_context(trace: u128, span: u64) -> (Context, SpanIds) {
    let ids = SpanIds::new(TraceId::from(trace), SpanId::from(span));
    let context = SpanContext::new(
        ids.trace_id(),
        ids.span_id(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    (Context::new().with_remote_span_context(context), ids)
}

fn on_a_fresh_thread(f: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        scope.spawn(f);
    });
}

/// Whether this thread's word sends its records the long way.
fn looking() -> bool {
    owner::word() & owner::LOOK != 0
}

#[test]
fn the_owner_keeps_an_exemplar_exactly_while_a_span_is_current() {
    on_a_fresh_thread(|| {
        let ttft = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::TraceBased);
        ttft.record(0.1);
        assert!(ttft.exemplars().is_empty());
        if owner::FLAGGED {
            assert!(!looking(), "learnt on the first record: no span here");
        }
        let (cx, ids) = sampled_context(0xabc, 0x12);
        let attached = cx.attach();
        if owner::FLAGGED {
            assert!(looking());
        }
        ttft.record(0.2);
        drop(attached);
        ttft.record(5.0);
        let held = ttft.exemplars();
        assert_eq!(held.len(), 1);
        assert_eq!((held[0].value, held[0].span), (0.2, Some(ids)));
        // A span named for a stretch of code, then gone again.
        let named = SpanIds::from_raw(7, 9);
        exemplar::in_span(Some(named), || ttft.record(6.0));
        if owner::FLAGGED {
            assert!(!looking());
        }
        ttft.record(7.0);
        let held = ttft.exemplars();
        assert_eq!(held.len(), 2);
        assert_eq!((held[1].value, held[1].span), (6.0, Some(named)));
        // All of it in the owner's cell, none lost.
        assert_eq!(ttft.stripes(), 0);
        let snapshot = ttft.snapshot();
        assert_eq!((snapshot.bucket_counts, snapshot.sum), (vec![2, 3], 18.3));
    });
}

#[test]
fn a_span_attached_before_the_first_record_is_found() {
    on_a_fresh_thread(|| {
        let (cx, ids) = sampled_context(0xdef, 0x34);
        let _attached = cx.attach();
        let ttft = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::TraceBased);
        ttft.record(0.5);
        let held = ttft.exemplars();
        assert_eq!((held.len(), held[0].span), (1, Some(ids)));
    });
}

#[test]
fn always_on_keeps_the_owners_records_outside_any_span() {
    on_a_fresh_thread(|| {
        let latency = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::AlwaysOn);
        let quiet = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::AlwaysOff);
        latency.record(0.1);
        quiet.record(0.1);
        // Past the bucket slot's millisecond, so the next is kept too.
        std::thread::sleep(Duration::from_millis(2));
        latency.record(0.3);
        quiet.record(0.3);
        let held = latency.exemplars();
        assert_eq!((held.len(), held[0].value, held[0].span), (1, 0.3, None));
        assert!(quiet.exemplars().is_empty());
        assert_eq!((latency.stripes(), latency.snapshot().count), (0, 2));
    });
}

#[test]
fn another_threads_records_keep_their_exemplars_in_its_stripe() {
    let ttft = Histogram::<f64>::with_exemplars([1.0].into(), ExemplarFilter::TraceBased);
    // The test's thread owns the first cell (it lives on, keeping its
    // number from the next thread).
    ttft.record(0.1);
    let (cx, ids) = sampled_context(0x55, 0x66);
    on_a_fresh_thread(|| {
        ttft.record(2.0);
        let _attached = cx.attach();
        ttft.record(3.0);
    });
    assert_eq!(ttft.stripes(), 1);
    let held = ttft.exemplars();
    assert_eq!(
        (held.len(), held[0].value, held[0].span),
        (1, 3.0, Some(ids))
    );
    assert_eq!(ttft.snapshot().bucket_counts, [1, 2]);
}
