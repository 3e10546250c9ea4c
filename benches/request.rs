//! One streamed inference request timed end to end: `InferenceRequest`
//! (start, first token, 200 streamed tokens, finish) against what a careful
//! user writes by hand with the SDK for the same measurements, in one run;
//! and the client's twin, one streamed call through `ModelCall` (200 chunks,
//! a time per output chunk for each after the first). `scripts/bench.sh`
//! prints the ratios.

use std::time::Instant;

use divan::{black_box, Bencher};
use nemo_lens::instruments::{InferenceRequest, ModelCall};
use nemo_lens::opentelemetry::metrics::{Histogram, Meter as OtelMeter, MeterProvider as _};
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::Meter;

mod support;

use support::provider;

/// Output tokens streamed per request, and chunks per call.
const TOKENS: u64 = 200;

fn main() {
    divan::main();
}

/// The hand-written equivalent: the five histograms, the clock reads and
/// the TTFT/TPOT arithmetic a server author writes without the guard.
struct HandRequest {
    duration: Histogram<f64>,
    ttft: Histogram<f64>,
    tpot: Histogram<f64>,
    tokens: Histogram<u64>,
}

fn seconds_histogram(meter: &OtelMeter, name: &'static str, bounds: &[f64]) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_boundaries(bounds.to_vec())
        .build()
}

impl HandRequest {
    fn new(meter: &OtelMeter) -> Self {
        HandRequest {
            duration: seconds_histogram(
                meter,
                "gen_ai.server.request.duration",
                &[
                    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92,
                ],
            ),
            ttft: seconds_histogram(
                meter,
                "gen_ai.server.time_to_first_token",
                &[
                    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                    5.0, 7.5, 10.0,
                ],
            ),
            tpot: seconds_histogram(
                meter,
                "gen_ai.server.time_per_output_token",
                &[
                    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
                ],
            ),
            tokens: support::token_usage(meter),
        }
    }

    fn serve(&self, model: &'static str) {
        let start = Instant::now();
        let mut first = None;
        let mut produced = 0u64;
        for _ in 0..TOKENS {
            if first.is_none() {
                first = Some(Instant::now());
            }
            produced += black_box(1);
        }
        let end = Instant::now();
        let base = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model),
        ];
        self.duration.record((end - start).as_secs_f64(), &base);
        if let Some(first) = first {
            self.ttft.record((first - start).as_secs_f64(), &base);
            if produced >= 2 {
                let tpot = (end - first).as_secs_f64() / (produced - 1) as f64;
                self.tpot.record(tpot, &base);
            }
        }
        let with_type = |kind: &'static str| {
            let [a, b, c] = base.clone();
            [a, b, c, KeyValue::new("gen_ai.token.type", kind)]
        };
        self.tokens.record(128, &with_type("input"));
        self.tokens.record(produced, &with_type("output"));
    }
}

fn serve(meter: &Meter, model: &'static str) {
    let mut req = InferenceRequest::start(meter)
        .model(model)
        .input_tokens(128);
    for _ in 0..TOKENS {
        req.first_token();
        req.add_output_tokens(black_box(1));
    }
    req.finish();
}

mod inference_request_200_tokens {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandRequest::new(&provider.meter("nemo.lens"));
        hand.serve("llama-3-8b");
        bencher.bench_local(|| hand.serve(black_box("llama-3-8b")));
    }

    #[divan::bench]
    fn guard(bencher: Bencher) {
        let provider = provider();
        let meter = Meter::from(provider.meter("nemo.lens"));
        serve(&meter, "llama-3-8b");
        bencher.bench_local(|| serve(&meter, black_box("llama-3-8b")));
    }

    /// The guard on a meter with three latency objectives: each request
    /// judged and counted in `nemo.inference.requests.judged`.
    #[divan::bench]
    fn guard_judged(bencher: Bencher) {
        let provider = provider();
        let slo = "time_to_first_token:300 inter_token_latency:20 request_latency:3000";
        let meter = Meter::from(provider.meter("nemo.lens"))
            .with_objectives(nemo_lens::slo::Objectives::new(slo.parse().unwrap()));
        serve(&meter, "llama-3-8b");
        bencher.bench_local(|| serve(&meter, black_box("llama-3-8b")));
    }

    #[divan::bench]
    fn disabled(bencher: Bencher) {
        let meter = Meter::noop();
        bencher.bench_local(|| serve(&meter, black_box("llama-3-8b")));
    }
}

/// The hand-written client call: a clock read per chunk, the gap since the
/// previous chunk recorded as it arrives (the conventions' definition), the
/// duration, time to first chunk and token usage at the end.
struct HandCall {
    duration: Histogram<f64>,
    first_chunk: Histogram<f64>,
    per_chunk: Histogram<f64>,
    tokens: Histogram<u64>,
}

const CLIENT_BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

impl HandCall {
    fn new(meter: &OtelMeter) -> Self {
        HandCall {
            duration: seconds_histogram(meter, "gen_ai.client.operation.duration", &CLIENT_BOUNDS),
            first_chunk: seconds_histogram(
                meter,
                "gen_ai.client.operation.time_to_first_chunk",
                &CLIENT_BOUNDS,
            ),
            per_chunk: seconds_histogram(
                meter,
                "gen_ai.client.operation.time_per_output_chunk",
                &CLIENT_BOUNDS,
            ),
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .build(),
        }
    }

    fn call(&self, model: &'static str) {
        let base = [
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model),
        ];
        let start = Instant::now();
        let mut last: Option<Instant> = None;
        for _ in 0..black_box(TOKENS) {
            let now = Instant::now();
            match last {
                Some(last) => self.per_chunk.record((now - last).as_secs_f64(), &base),
                None => self.first_chunk.record((now - start).as_secs_f64(), &base),
            }
            last = Some(now);
        }
        self.duration
            .record((Instant::now() - start).as_secs_f64(), &base);
        let with_type = |kind: &'static str| {
            let [a, b, c] = base.clone();
            [a, b, c, KeyValue::new("gen_ai.token.type", kind)]
        };
        self.tokens.record(128, &with_type("input"));
        self.tokens.record(TOKENS, &with_type("output"));
    }
}

fn call(meter: &Meter, model: &'static str) {
    let mut call = ModelCall::start(meter).model(model).input_tokens(128);
    for _ in 0..black_box(TOKENS) {
        call.chunk();
    }
    call.output_tokens(TOKENS).finish();
}

mod model_call_200_chunks {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandCall::new(&provider.meter("nemo.lens"));
        hand.call("policy");
        bencher.bench_local(|| hand.call(black_box("policy")));
    }

    #[divan::bench]
    fn guard(bencher: Bencher) {
        let provider = provider();
        let meter = Meter::from(provider.meter("nemo.lens"));
        call(&meter, "policy");
        bencher.bench_local(|| call(&meter, black_box("policy")));
    }

    #[divan::bench]
    fn disabled(bencher: Bencher) {
        let meter = Meter::noop();
        bencher.bench_local(|| call(&meter, black_box("policy")));
    }
}
