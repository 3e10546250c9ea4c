//! The GenAI server and client vocabulary: the request guards' arithmetic and
//! where each attribute goes, asserted on exported values.

use std::time::{Duration, Instant};

use crate::support::{AttrValue, Harness, Point, Value};
use nemo_lens::instruments::{InferenceMetrics, InferenceRequest, ModelCall, DROPPED_ERROR_TYPE};
use nemo_lens::{Instruments, Meter};

const DURATION: &str = "gen_ai.server.request.duration";
const TTFT: &str = "gen_ai.server.time_to_first_token";
const TPOT: &str = "gen_ai.server.time_per_output_token";
const TOKENS: &str = "gen_ai.client.token.usage";

/// The single recorded value of a histogram point.
fn only_value(point: &Point) -> f64 {
    match &point.value {
        Value::Histogram { count, sum, .. } => {
            assert_eq!(*count, 1, "{point:?}");
            *sum
        }
        Value::Number(_) => panic!("{} is not a histogram", point.name),
    }
}

fn single(harness: &Harness, name: &str) -> Point {
    let mut points = harness.points_of(name);
    assert_eq!(points.len(), 1, "{name}: {points:#?}");
    points.remove(0)
}

fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
}

#[test]
fn a_streamed_request_exports_ttft_tpot_and_duration() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut req = InferenceRequest::start_at(&harness.meter, t0)
        .model("llama-3-8b")
        .response_model("llama-3-8b-instruct")
        .server_address("10.0.0.7")
        .server_port(8000)
        .input_tokens(12);
    req.first_token_at(t0 + Duration::from_millis(20));
    for _ in 0..5 {
        req.first_token_at(t0 + Duration::from_millis(40)); // later calls change nothing
        req.add_output_tokens(1);
    }
    req.finish_at(t0 + Duration::from_millis(60));

    let ttft = single(&harness, TTFT);
    let tpot = single(&harness, TPOT);
    let duration = single(&harness, DURATION);
    assert_close(only_value(&ttft), 0.020);
    assert_close(only_value(&tpot), 0.010);
    assert_close(only_value(&duration), 0.060);
    for point in [&ttft, &tpot, &duration] {
        assert_eq!(point.unit, "s");
        assert_eq!(point.str_attr("gen_ai.request.model"), Some("llama-3-8b"));
        assert_eq!(
            point.str_attr("gen_ai.response.model"),
            Some("llama-3-8b-instruct")
        );
        assert_eq!(
            point.str_attr("gen_ai.operation.name"),
            Some("text_completion")
        );
        assert_eq!(point.str_attr("gen_ai.provider.name"), Some("nemo"));
        assert_eq!(point.str_attr("server.address"), Some("10.0.0.7"));
        assert_eq!(point.attr("server.port"), Some(&AttrValue::I64(8000)));
        assert_eq!(point.attr("error.type"), None);
        assert_eq!(point.attributes.len(), 6, "{point:?}");
    }
    let tokens = harness.points_of(TOKENS);
    let value_of = |kind: &str| {
        let point = tokens
            .iter()
            .find(|p| p.str_attr("gen_ai.token.type") == Some(kind))
            .unwrap();
        only_value(point)
    };
    assert_eq!((value_of("input"), value_of("output")), (12.0, 5.0));
}

#[test]
fn the_advised_buckets_are_exported() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut req = InferenceRequest::start_at(&harness.meter, t0).output_tokens(3);
    req.first_token_at(t0 + Duration::from_millis(3));
    req.finish_at(t0 + Duration::from_millis(50));
    let bounds = |name: &str| match single(&harness, name).value {
        Value::Histogram { bounds, .. } => bounds,
        Value::Number(_) => unreachable!(),
    };
    assert_eq!(
        bounds(TTFT),
        [
            0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0
        ]
    );
    assert_eq!(
        bounds(TPOT),
        [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
    );
}

#[test]
fn a_failed_request_exports_its_error_type_on_the_duration_only() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut req = InferenceRequest::start_at(&harness.meter, t0)
        .model("llama-3-8b")
        .input_tokens(100);
    req.first_token_at(t0 + Duration::from_millis(5));
    req.add_output_tokens(4);
    req.fail_at(String::from("timeout"), t0 + Duration::from_millis(250));

    let duration = single(&harness, DURATION);
    assert_close(only_value(&duration), 0.250);
    assert_eq!(duration.str_attr("error.type"), Some("timeout"));
    assert!(harness.points_of(TTFT).is_empty(), "no TTFT on failure");
    assert!(harness.points_of(TPOT).is_empty(), "no TPOT on failure");
    // The prompt was consumed; what was produced is no response.
    let tokens = harness.points_of(TOKENS);
    assert_eq!(tokens.len(), 1, "input tokens only: {tokens:#?}");
    assert_eq!(tokens[0].str_attr("gen_ai.token.type"), Some("input"));
    assert_eq!(only_value(&tokens[0]), 100.0);
    assert_eq!(
        tokens[0].attr("error.type"),
        None,
        "error.type belongs on the duration"
    );
}

#[test]
fn a_dropped_request_exports_other_once() {
    let harness = Harness::new();
    {
        let mut req = InferenceRequest::start(&harness.meter).model("llama-3-8b");
        req.first_token();
        req.add_output_tokens(7);
        // The client went away: the guard is dropped unfinished.
    }
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some(DROPPED_ERROR_TYPE));
    assert_eq!(DROPPED_ERROR_TYPE, "_OTHER");
    assert!(only_value(&duration) >= 0.0);
    assert!(harness.points_of(TTFT).is_empty());
    assert!(harness.points_of(TPOT).is_empty());
}

#[test]
fn a_panic_through_a_request_records_it_as_dropped() {
    let harness = Harness::new();
    let meter = harness.meter.clone();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _req = InferenceRequest::start(&meter).model("llama-3-8b");
        panic!("the handler failed");
    }));
    assert!(outcome.is_err());
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some("_OTHER"));
}

#[test]
fn finishing_records_once_and_tpot_needs_two_tokens() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut req = InferenceRequest::start_at(&harness.meter, t0).output_tokens(1);
    req.first_token_at(t0 + Duration::from_millis(10));
    req.finish_at(t0 + Duration::from_millis(10));
    assert_close(only_value(&single(&harness, TTFT)), 0.010);
    assert!(harness.points_of(TPOT).is_empty(), "one token has no TPOT");
    // finish consumed the guard: its drop recorded nothing more.
    assert_eq!(harness.points_of(DURATION).len(), 1);
}

#[test]
fn the_guard_is_send_and_static() {
    fn assert_send<T: Send + 'static>() {}
    assert_send::<InferenceRequest>();
    assert_send::<ModelCall>();
}

/// A disabled rank's meter has nothing to observe; what can fail here is a
/// panic or a clock arithmetic error on a guard that never started timing.
#[test]
fn a_disabled_meter_takes_every_path_without_panicking() {
    let meter = Meter::noop();
    let mut req = InferenceRequest::start(&meter).model("m").input_tokens(3);
    req.first_token();
    req.first_token_at(Instant::now());
    req.add_output_tokens(2);
    req.finish();
    InferenceRequest::start(&meter).fail("timeout");
    InferenceRequest::start_at(&meter, Instant::now()).finish_at(Instant::now());
    drop(InferenceRequest::start(&meter));
    let mut call = ModelCall::start(&meter);
    call.chunk();
    call.fail("timeout");
}

#[test]
fn an_empty_error_type_is_recorded_as_other() {
    let harness = Harness::new();
    InferenceRequest::start(&harness.meter).fail("");
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some(DROPPED_ERROR_TYPE));
}

#[test]
fn the_derived_setters_take_a_plain_port_literal() {
    let harness = Harness::new();
    InferenceMetrics::default()
        .request_duration_s(0.1)
        .server_port(8000)
        .record(&harness.meter);
    let duration = single(&harness, DURATION);
    assert_eq!(duration.attr("server.port"), Some(&AttrValue::I64(8000)));
}

#[test]
fn without_the_new_fields_the_python_attributes_are_unchanged() {
    let harness = Harness::new();
    InferenceMetrics::default()
        .request_duration_s(0.5)
        .model("llama-3-8b")
        .record(&harness.meter);
    let duration = single(&harness, DURATION);
    let keys: Vec<&str> = duration.attributes.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "gen_ai.operation.name",
            "gen_ai.provider.name",
            "gen_ai.request.model"
        ]
    );
}

#[test]
fn a_model_call_exports_the_client_metrics() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut call = ModelCall::start_at(&harness.meter, t0)
        .model("policy")
        .server_address("127.0.0.1")
        .server_port(8000);
    for ms in [100, 120, 140, 160] {
        call.chunk_at(t0 + Duration::from_millis(ms));
    }
    call.input_tokens(900)
        .output_tokens(64)
        .finish_at(t0 + Duration::from_millis(400));

    let duration = single(&harness, "gen_ai.client.operation.duration");
    let first = single(&harness, "gen_ai.client.operation.time_to_first_chunk");
    let per_chunk = single(&harness, PER_CHUNK);
    assert_close(only_value(&duration), 0.400);
    assert_close(only_value(&first), 0.100);
    let Value::Histogram { count, sum, .. } = per_chunk.value else {
        unreachable!()
    };
    assert_eq!(count, 3, "four chunks, three gaps");
    assert_close(sum, 0.060);
    for point in [&duration, &first, &per_chunk] {
        assert_eq!(point.str_attr("gen_ai.operation.name"), Some("chat"));
        assert_eq!(point.str_attr("gen_ai.request.model"), Some("policy"));
        assert_eq!(point.attr("server.port"), Some(&AttrValue::I64(8000)));
    }
    let tokens = harness.points_of(TOKENS);
    assert_eq!(tokens.len(), 2, "{tokens:#?}");

    let mut failed = ModelCall::start_at(&harness.meter, t0).model("policy");
    failed.chunk_at(t0 + Duration::from_millis(10));
    failed.chunk_at(t0 + Duration::from_millis(20));
    failed.fail_at("rate_limited", t0 + Duration::from_millis(30));
    let durations = harness.points_of("gen_ai.client.operation.duration");
    let failure = durations
        .iter()
        .find(|p| p.str_attr("error.type") == Some("rate_limited"))
        .unwrap();
    assert_close(only_value(failure), 0.030);
    // The failed call's chunks gave no chunk timings: only the successful
    // call's first chunk and three gaps.
    let first = single(&harness, "gen_ai.client.operation.time_to_first_chunk");
    assert_eq!(first.attr("error.type"), None);
    assert_eq!(first.attr("server.port"), Some(&AttrValue::I64(8000)));
    let per_chunk = single(&harness, PER_CHUNK);
    assert!(matches!(per_chunk.value, Value::Histogram { count: 3, .. }));
}

const PER_CHUNK: &str = "gen_ai.client.operation.time_per_output_chunk";

#[test]
fn time_per_output_chunk_is_recorded_for_each_chunk_after_the_first() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let mut call = ModelCall::start_at(&harness.meter, t0).model("policy");
    for ms in [10, 30, 100] {
        call.chunk_at(t0 + Duration::from_millis(ms));
    }
    // Known only once the response arrived: the gaps carry it too.
    call.response_model("policy-v2")
        .finish_at(t0 + Duration::from_millis(120));

    let point = single(&harness, PER_CHUNK);
    let Value::Histogram {
        count,
        sum,
        min,
        max,
        bounds,
        bucket_counts,
    } = &point.value
    else {
        unreachable!()
    };
    // Three chunks, two gaps: 0.020 s and 0.070 s, not one mean of 0.045 s.
    assert_eq!(*count, 2);
    assert_close(*sum, 0.090);
    assert_close(min.unwrap(), 0.020);
    assert_close(max.unwrap(), 0.070);
    assert_eq!(bounds[..4], [0.01, 0.02, 0.04, 0.08]);
    assert_eq!(
        bucket_counts[..5],
        [0, 1, 0, 1, 0],
        "(0.01, 0.02] and (0.04, 0.08]"
    );
    assert_eq!(point.str_attr("gen_ai.response.model"), Some("policy-v2"));
    assert_eq!(point.str_attr("gen_ai.request.model"), Some("policy"));
    assert_eq!(
        point.description,
        "Time per output chunk, recorded for each chunk received after the first one, measured \
         as the time elapsed from the end of the previous chunk to the end of the current chunk."
    );
    let first = single(&harness, "gen_ai.client.operation.time_to_first_chunk");
    assert_close(only_value(&first), 0.010);

    // One chunk: a time to first chunk, no gap.
    let harness = Harness::new();
    let mut one = ModelCall::start_at(&harness.meter, t0);
    one.chunk_at(t0 + Duration::from_millis(5));
    one.finish_at(t0 + Duration::from_millis(6));
    assert!(harness.points_of(PER_CHUNK).is_empty());
    assert_eq!(
        harness
            .points_of("gen_ai.client.operation.time_to_first_chunk")
            .len(),
        1
    );
}
