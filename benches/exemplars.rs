//! What exemplars cost a histogram record, in one run: the cell without
//! exemplar storage (the record as it was before exemplars), then each
//! filter with no span current and with a sampled span current, on a bare
//! cell and through a meter's owned histogram. `BENCHMARKS.md` has the
//! ratios; `cargo bench --bench threads -- 1 2 --only exemplar` has one
//! series on several threads with `always_on`.

use divan::{black_box, Bencher};
use nemo_lens::cells::Histogram;
use nemo_lens::opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use nemo_lens::opentelemetry::{Context, KeyValue};
use nemo_lens::testing::Capture;
use nemo_lens::ExemplarFilter;

fn main() {
    divan::main();
}

/// The GenAI duration buckets' bounds.
const BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const VALUES: [f64; 8] = [0.012, 0.05, 0.3, 0.07, 1.5, 0.9, 0.033, 4.0];

/// A sampled span, current until the guard drops.
fn in_sampled_span() -> nemo_lens::opentelemetry::ContextGuard {
    let span = SpanContext::new(
        TraceId::from(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736_u128),
        SpanId::from(0x00f0_67aa_0ba9_02b7_u64),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    Context::new().with_remote_span_context(span).attach()
}

/// Records before measuring, so each row starts warm whatever ran before
/// it (run alone, a row otherwise reads up to 1.4x slower).
const WARM_UP: usize = 200_000;

fn bench_cell(bencher: Bencher, cell: Histogram<f64>) {
    for i in 0..WARM_UP {
        cell.record(VALUES[i & 7]);
    }
    let mut i = 0usize;
    bencher.bench_local(|| {
        i = i.wrapping_add(1);
        cell.record(black_box(VALUES[i & 7]));
    });
}

/// A bare cell.
mod cell {
    use super::*;

    /// No exemplar storage: the record before exemplars.
    #[divan::bench]
    fn no_exemplars(bencher: Bencher) {
        bench_cell(bencher, Histogram::new(BOUNDS.into()));
    }

    #[divan::bench]
    fn always_off(bencher: Bencher) {
        bench_cell(
            bencher,
            Histogram::with_exemplars(BOUNDS.into(), ExemplarFilter::AlwaysOff),
        );
    }

    #[divan::bench]
    fn trace_based_no_span(bencher: Bencher) {
        bench_cell(
            bencher,
            Histogram::with_exemplars(BOUNDS.into(), ExemplarFilter::TraceBased),
        );
    }

    #[divan::bench]
    fn trace_based_sampled_span(bencher: Bencher) {
        let _span = in_sampled_span();
        bench_cell(
            bencher,
            Histogram::with_exemplars(BOUNDS.into(), ExemplarFilter::TraceBased),
        );
    }

    #[divan::bench]
    fn always_on_no_span(bencher: Bencher) {
        bench_cell(
            bencher,
            Histogram::with_exemplars(BOUNDS.into(), ExemplarFilter::AlwaysOn),
        );
    }
}

fn bench_meter(bencher: Bencher, filter: ExemplarFilter) {
    let capture = Capture::with_exemplar_filter(filter);
    let histogram = capture
        .meter()
        .f64_histogram("gen_ai.server.request.duration")
        .with_unit("s")
        .with_boundaries(BOUNDS.to_vec())
        .build();
    let attributes = [KeyValue::new("gen_ai.request.model", "llama-3-8b")];
    for i in 0..WARM_UP {
        histogram.record(VALUES[i & 7], &attributes);
    }
    let mut i = 0usize;
    bencher.bench_local(|| {
        i = i.wrapping_add(1);
        histogram.record(black_box(VALUES[i & 7]), &attributes);
    });
}

/// A meter's owned histogram with one attribute (the series looked up per
/// record), as a handler records it.
mod meter {
    use super::*;

    #[divan::bench]
    fn always_off(bencher: Bencher) {
        bench_meter(bencher, ExemplarFilter::AlwaysOff);
    }

    #[divan::bench]
    fn trace_based_no_span(bencher: Bencher) {
        bench_meter(bencher, ExemplarFilter::TraceBased);
    }

    #[divan::bench]
    fn trace_based_sampled_span(bencher: Bencher) {
        let _span = in_sampled_span();
        bench_meter(bencher, ExemplarFilter::TraceBased);
    }
}
