//! Recording semantics: only `Some` fields, attribute defaults, dropped values,
//! custom sets, setters and the per-meter cache.

use crate::support::{AttrValue, Harness, Value};
use nemo_lens::instruments::gym::{record_gym_metrics, GymMetrics};
use nemo_lens::instruments::rl::{record_rl_metrics, RlMetrics};
use nemo_lens::instruments::{record_inference_metrics, InferenceMetrics};
use nemo_lens::{Instruments, Meter};

/// A Megatron-style training set exercising every kind.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(prefix = "train")]
struct TrainMetrics {
    /// Training loss.
    #[gauge]
    loss: Option<f64>,
    /// Iterations skipped because of non-finite gradients.
    #[counter(unit = "{iteration}")]
    skipped_iters: Option<u64>,
    /// Tokens consumed.
    #[counter("train.tokens", unit = "{token}")]
    tokens: Option<f64>,
    /// Micro-batches in flight.
    #[up_down_counter(unit = "{batch}")]
    in_flight: Option<i64>,
    /// Step time.
    #[histogram(unit = "s", buckets = [0.5, 1, 2, 4])]
    step_time: Option<f32>,
    /// Parallel rank of the reporting process.
    #[attribute("dl.rank")]
    rank: Option<i64>,
    /// Phase name.
    #[attribute("train.phase", default = "train")]
    phase: Option<String>,
}

#[test]
fn records_only_the_fields_that_are_some() {
    let harness = Harness::new();
    RlMetrics::default()
        .reward_mean(0.75)
        .record(&harness.meter);
    let point = harness.only_point();
    assert_eq!(point.name, "rl.reward.mean");
    assert_eq!(point.number(), 0.75);
    assert!(point.attributes.is_empty());
}

#[test]
fn all_eleven_rl_values_reach_their_instruments() {
    let harness = Harness::new();
    let metrics = RlMetrics::default()
        .reward_mean(1.0)
        .kl_divergence(2.0)
        .policy_loss(3.0)
        .value_loss(4.0)
        .entropy(5.0)
        .response_length_mean(6.0)
        .grad_norm(7.0)
        .learning_rate(8.0)
        .throughput_tokens_per_sec(9.0)
        .generation_duration_ms(10.0)
        .rollout_duration_ms(11.0);
    record_rl_metrics(&harness.meter, &metrics);
    let points = harness.points();
    let expected = [
        ("rl.reward.mean", 1.0),
        ("rl.kl_divergence", 2.0),
        ("rl.policy_loss", 3.0),
        ("rl.value_loss", 4.0),
        ("rl.entropy", 5.0),
        ("rl.response_length.mean", 6.0),
        ("rl.grad_norm", 7.0),
        ("rl.learning_rate", 8.0),
        ("rl.throughput.tokens_per_sec", 9.0),
    ];
    assert_eq!(points.len(), 11);
    for (name, value) in expected {
        let point = points.iter().find(|p| p.name == name).unwrap();
        assert_eq!(point.number(), value, "{name}");
    }
    let throughput = points
        .iter()
        .find(|p| p.name == "rl.throughput.tokens_per_sec")
        .unwrap();
    assert_eq!(throughput.unit, "{token}/s");
    for (name, value) in [
        ("rl.generation.duration_ms", 10.0),
        ("rl.rollout.duration_ms", 11.0),
    ] {
        let point = points.iter().find(|p| p.name == name).unwrap();
        assert!(matches!(point.value, Value::Histogram { count: 1, sum, .. } if sum == value));
        assert_eq!(point.unit, "ms");
    }
}

#[test]
fn setters_and_struct_literals_record_the_same() {
    let literal = Harness::new();
    GymMetrics {
        verify_duration_ms: Some(45.6),
        active_servers: Some(4),
        ..Default::default()
    }
    .record(&literal.meter);
    let chained = Harness::new();
    record_gym_metrics(
        &chained.meter,
        &GymMetrics::default()
            .verify_duration_ms(45.6)
            .active_servers(4),
    );
    let strip = |h: &Harness| {
        let mut points = h.points();
        points.sort_by(|a, b| a.name.cmp(&b.name));
        points
    };
    let (a, b) = (strip(&literal), strip(&chained));
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
    let active = a.iter().find(|p| p.name == "gym.servers.active").unwrap();
    assert_eq!((active.number(), active.number), (4.0, "u64"));
}

#[test]
fn inference_attributes_default_and_override() {
    let harness = Harness::new();
    InferenceMetrics::default()
        .request_duration_s(0.1)
        .record(&harness.meter);
    InferenceMetrics::default()
        .request_duration_s(0.2)
        .model("llama-3-8b")
        .operation_name("chat")
        .provider_name("vllm")
        .record(&harness.meter);
    // An empty model is omitted, as `if model:` does in Python.
    InferenceMetrics::default()
        .request_duration_s(0.4)
        .model("")
        .record(&harness.meter);

    let mut points = harness.points_of("gen_ai.server.request.duration");
    points.sort_by_key(|p| p.attributes.len());
    assert_eq!(points.len(), 2, "{points:#?}");
    let defaults = &points[0];
    assert_eq!(
        defaults.str_attr("gen_ai.operation.name"),
        Some("text_completion")
    );
    assert_eq!(defaults.str_attr("gen_ai.provider.name"), Some("nemo"));
    assert_eq!(defaults.str_attr("gen_ai.request.model"), None);
    assert!(matches!(defaults.value, Value::Histogram { count: 2, .. }));
    let overridden = &points[1];
    assert_eq!(overridden.str_attr("gen_ai.operation.name"), Some("chat"));
    assert_eq!(overridden.str_attr("gen_ai.provider.name"), Some("vllm"));
    assert_eq!(
        overridden.str_attr("gen_ai.request.model"),
        Some("llama-3-8b")
    );
}

#[test]
fn token_fields_share_one_instrument_told_apart_by_type() {
    let harness = Harness::new();
    record_inference_metrics(
        &harness.meter,
        &InferenceMetrics::default()
            .model("m")
            .input_tokens(128)
            .output_tokens(256),
    );
    let points = harness.points_of("gen_ai.client.token.usage");
    assert_eq!(points.len(), 2);
    for (token_type, tokens) in [("input", 128.0), ("output", 256.0)] {
        let point = points
            .iter()
            .find(|p| p.str_attr("gen_ai.token.type") == Some(token_type))
            .unwrap();
        assert_eq!(point.attributes.len(), 4, "{point:?}");
        assert!(matches!(point.value, Value::Histogram { sum, .. } if sum == tokens));
    }
}

#[test]
fn non_finite_values_are_dropped_and_counted_without_losing_the_rest() {
    let harness = Harness::new();
    RlMetrics::default()
        .reward_mean(f64::NAN)
        .policy_loss(0.3)
        .rollout_duration_ms(f64::INFINITY)
        .record(&harness.meter);
    let point = harness.only_point();
    assert_eq!(point.name, "rl.policy_loss");
    let set = harness.meter.instruments::<RlMetrics>().unwrap();
    assert_eq!(set.dropped_measurements(), 2);
}

#[test]
fn counters_drop_negative_values_and_add_zero_as_nothing() {
    let harness = Harness::new();
    TrainMetrics::default().tokens(100.0).record(&harness.meter);
    TrainMetrics::default().tokens(-5.0).record(&harness.meter);
    TrainMetrics::default()
        .tokens(0.0)
        .skipped_iters(0)
        .record(&harness.meter);
    TrainMetrics::default()
        .skipped_iters(2)
        .record(&harness.meter);
    let tokens = harness.points_of("train.tokens");
    assert_eq!(tokens.len(), 1);
    assert_eq!((tokens[0].kind, tokens[0].number()), ("Sum", 100.0));
    assert_eq!(harness.points_of("train.skipped_iters")[0].number(), 2.0);
    let set = harness.meter.instruments::<TrainMetrics>().unwrap();
    assert_eq!(set.dropped_measurements(), 1, "only the negative increment");
}

#[test]
fn custom_set_records_every_kind_with_its_attributes() {
    let harness = Harness::new();
    let step = TrainMetrics::default()
        .rank(3)
        .loss(2.5)
        .in_flight(4)
        .step_time(1.5_f32);
    step.record(&harness.meter);
    step.clone()
        .in_flight(-1)
        .phase("eval".to_owned())
        .record(&harness.meter);

    let loss = harness.points_of("train.loss");
    assert_eq!(loss.len(), 2);
    assert!(loss
        .iter()
        .all(|p| p.attr("dl.rank") == Some(&AttrValue::I64(3)) && p.number() == 2.5));
    let in_flight = harness.points_of("train.in_flight");
    let train = in_flight
        .iter()
        .find(|p| p.str_attr("train.phase") == Some("train"))
        .unwrap();
    let eval = in_flight
        .iter()
        .find(|p| p.str_attr("train.phase") == Some("eval"))
        .unwrap();
    assert_eq!((train.number(), eval.number()), (4.0, -1.0));
    assert_eq!(train.unit, "{batch}");
    let step_time = harness.points_of("train.step_time");
    let Value::Histogram {
        bounds,
        bucket_counts,
        ..
    } = &step_time[0].value
    else {
        panic!("histogram expected");
    };
    assert_eq!(bounds, &[0.5, 1.0, 2.0, 4.0]);
    assert_eq!(bucket_counts, &[0, 0, 1, 0, 0]);
    assert_eq!(step_time[0].description, "Step time.");
}

#[test]
fn record_with_a_held_set_matches_record_on_the_meter() {
    let harness = Harness::new();
    let set = <GymMetrics as Instruments>::build_set(&harness.meter);
    GymMetrics::default()
        .active_servers(7)
        .verify_duration_ms(12.0)
        .record_with(&set);
    let held = harness.points();

    let other = Harness::new();
    GymMetrics::default()
        .active_servers(7)
        .verify_duration_ms(12.0)
        .record(&other.meter);
    let on_meter = other.points();

    assert_eq!(held.len(), 2, "{held:#?}");
    assert_eq!(held, on_meter);
    let active = held
        .iter()
        .find(|p| p.name == "gym.servers.active")
        .unwrap();
    assert_eq!(active.number(), 7.0);
}

#[test]
fn sets_are_built_once_per_meter_and_shared_by_clones() {
    let harness = Harness::new();
    assert_eq!(harness.meter.cached_sets(), 0);
    RlMetrics::default().entropy(1.0).record(&harness.meter);
    let first = harness.meter.instruments::<RlMetrics>().unwrap() as *const _;
    let clone = harness.meter.clone();
    RlMetrics::default().entropy(2.0).record(&clone);
    let second = clone.instruments::<RlMetrics>().unwrap() as *const _;
    assert_eq!(first, second);
    assert_eq!(harness.meter.cached_sets(), 1);
    GymMetrics::default().active_servers(1).record(&clone);
    assert_eq!(harness.meter.cached_sets(), 2);
    assert_eq!(harness.points_of("rl.entropy")[0].number(), 2.0);
}

#[test]
fn a_noop_meter_builds_nothing_and_records_nothing() {
    let meter = Meter::noop();
    RlMetrics::default().entropy(1.0).record(&meter);
    assert!(meter.instruments::<RlMetrics>().is_none());
    assert_eq!(meter.cached_sets(), 0);
    assert!(!meter.is_enabled());
}

#[test]
fn descriptors_of_a_custom_set_describe_every_field() {
    let descriptors = TrainMetrics::DESCRIPTORS;
    let names: Vec<_> = descriptors.iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "train.loss",
            "train.skipped_iters",
            "train.tokens",
            "train.in_flight",
            "train.step_time"
        ]
    );
    let step_time = &descriptors[4];
    assert_eq!(step_time.buckets, Some(&[0.5, 1.0, 2.0, 4.0][..]));
    assert_eq!(step_time.attribute_keys, ["dl.rank", "train.phase"]);
    assert_eq!(step_time.value_type, nemo_lens::ValueType::F64);
    assert_eq!(descriptors[1].unit, "{iteration}");
}

#[test]
fn fields_never_recorded_export_no_series() {
    let harness = Harness::new();
    InferenceMetrics::default()
        .request_duration_s(0.3)
        .model("m")
        .record(&harness.meter);
    TrainMetrics::default().loss(1.0).record(&harness.meter);
    let names: Vec<String> = harness.points().into_iter().map(|p| p.name).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"gen_ai.server.request.duration".to_owned()));
    assert!(names.contains(&"train.loss".to_owned()));
}

/// `TrainMetrics` has one histogram: its record reads the span itself (no
/// shared `SpanOnce`), and a set recorded with that field alone exports
/// that one series.
#[test]
fn a_lone_histogram_field_exports_only_its_series() {
    let harness = Harness::new();
    TrainMetrics::default()
        .step_time(0.7_f32)
        .record(&harness.meter);
    let point = harness.only_point();
    assert_eq!(point.name, "train.step_time");
    assert_eq!(point.str_attr("train.phase"), Some("train"));
    let Value::Histogram { bucket_counts, .. } = &point.value else {
        panic!("histogram expected");
    };
    assert_eq!(bucket_counts, &[0, 1, 0, 0, 0]);
}

/// A router's set: a count per backend, and a total no attribute reaches.
#[derive(Instruments, Default)]
struct Routed {
    /// Requests sent, by backend.
    #[counter("test.routed.requests", unit = "{request}")]
    requests: Option<u64>,
    /// Requests sent, all backends together.
    #[counter("test.routed.total", unit = "{request}")]
    total: Option<u64>,
    /// The backend.
    #[attribute("server.address", only(requests))]
    backend: Option<String>,
}

/// The total records through the set's own bundle, the per-backend count
/// through the map: each record lands once in each, within the bound limit
/// and past it, and the total carries no attribute.
#[test]
fn a_field_no_attribute_reaches_records_once_past_the_bound_limit_too() {
    let harness = Harness::new();
    let backends = nemo_lens::__private::BOUND_LIMIT + 50;
    for _ in 0..2 {
        for i in 0..backends {
            Routed::default()
                .requests(1)
                .total(1)
                .backend(format!("10.0.{}.{}:8000", i / 256, i % 256))
                .record(&harness.meter);
        }
    }
    Routed::default().total(3).record(&harness.meter);
    let total = harness.points_of("test.routed.total");
    assert_eq!(total.len(), 1);
    assert!(total[0].attributes.is_empty(), "{:?}", total[0].attributes);
    assert_eq!(total[0].value, Value::Number((2 * backends + 3) as f64));
    let requests = harness.points_of("test.routed.requests");
    assert_eq!(requests.len(), backends);
    assert!(requests.iter().all(|p| p.value == Value::Number(2.0)
        && p.attributes.len() == 1
        && p.str_attr("server.address").is_some()));
}

#[test]
fn past_the_bound_limit_records_stay_exact() {
    let harness = Harness::new();
    let models = nemo_lens::__private::BOUND_LIMIT + 50;
    for round in 0..2_u64 {
        for i in 0..models {
            // error.type is scoped to the duration: past the limit, the
            // unbound path must scope it too.
            InferenceMetrics::default()
                .model(format!("model-{i}"))
                .input_tokens(i as u64 + round)
                .request_duration_s(1.0)
                .error_type("timeout")
                .record(&harness.meter);
        }
    }
    let durations = harness.points_of("gen_ai.server.request.duration");
    assert_eq!(durations.len(), models);
    assert!(durations
        .iter()
        .all(|p| p.str_attr("error.type") == Some("timeout") && p.attributes.len() == 4));
    let points = harness.points_of("gen_ai.client.token.usage");
    assert_eq!(points.len(), models);
    for point in points {
        let i: u64 = point.str_attr("gen_ai.request.model").unwrap()[6..]
            .parse()
            .unwrap();
        let Value::Histogram { count, sum, .. } = point.value else {
            panic!()
        };
        assert_eq!((count, sum), (2, (2 * i + 1) as f64), "model-{i}");
        assert_eq!(point.str_attr("gen_ai.token.type"), Some("input"));
        assert_eq!(point.attributes.len(), 4);
    }
}
