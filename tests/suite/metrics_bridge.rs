//! The `metrics` 0.24 bridge against `metrics-exporter-prometheus` 0.18:
//! the same macro calls, with smg's real names, labels and bucket matchers,
//! give the same families; and the facade's semantics one by one.

use std::time::Duration;

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher as PromMatcher, PrometheusBuilder};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

use crate::support::metrics_bridge::*;

/// smg's duration buckets.
const DURATION_BUCKETS: [f64; 29] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0, 45.0, 60.0,
    90.0, 120.0, 180.0, 240.0, 300.0, 480.0, 900.0, 1200.0, 1800.0, 2700.0, 3600.0, 5400.0, 7200.0,
];
/// Event-loop delay buckets (smg's constant; these values stand in for it).
const EVENT_LOOP_DELAY_BUCKETS: [f64; 8] = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5];

/// The program: what smg's gateway records over a few requests.
fn smg_program() {
    describe_counter!("smg_http_requests_total", "Total HTTP requests");
    describe_histogram!(
        "smg_http_request_duration_seconds",
        "HTTP request duration in seconds"
    );
    describe_counter!("smg_http_responses_total", "HTTP responses by status");
    describe_gauge!("smg_http_connections_active", "Active HTTP connections");
    describe_counter!("smg_router_tokens_total", "Tokens processed");
    // Described and never recorded: no series.
    describe_counter!("smg_router_never_recorded_total", "Never recorded");

    for (method, path, status, seconds) in [
        ("POST", "/v1/chat/completions", "200", 0.42),
        ("POST", "/v1/chat/completions", "200", 1.7),
        ("GET", "/health", "200", 0.0004),
        ("POST", "/v1/completions", "500", 12.0),
        ("POST", "/v1/chat/completions", "429", 0.003),
    ] {
        counter!("smg_http_requests_total", "method" => method, "path" => path).increment(1);
        histogram!("smg_http_request_duration_seconds", "method" => method, "path" => path)
            .record(seconds);
        let error_code = if status == "200" { "none" } else { "upstream" };
        // Label order differs between call sites: one series.
        if status == "429" {
            counter!("smg_http_responses_total", "error_code" => error_code, "status_code" => status, "path" => path)
                .increment(1);
        } else {
            counter!("smg_http_responses_total", "path" => path, "status_code" => status, "error_code" => error_code)
                .increment(1);
        }
    }
    // The 429 series again, from a call site with the other order.
    counter!("smg_http_responses_total", "path" => "/v1/chat/completions", "status_code" => "429", "error_code" => "upstream")
        .increment(1);
    gauge!("smg_http_connections_active").set(7.0);
    gauge!("smg_http_connections_active").set(5.0);
    for _ in 0..3 {
        gauge!("smg_admission_queue_depth").increment(1.0);
        gauge!("smg_admission_inflight").increment(1.0);
    }
    gauge!("smg_admission_queue_depth").decrement(1.0);

    let labels = [
        ("router_type", "regular"),
        ("backend_type", "grpc"),
        ("model", "llama-3-8b"),
        ("endpoint", "/v1/chat/completions"),
    ];
    counter!("smg_router_requests_total",
        "router_type" => "regular", "backend_type" => "grpc", "connection_mode" => "http",
        "model" => "llama-3-8b", "endpoint" => "/v1/chat/completions", "streaming" => "true")
    .increment(2);
    for (ttft, tpot, total) in [(0.08, 0.011, 2.1), (0.3, 0.02, 4.4), (0.05, 0.009, 0.9)] {
        histogram!("smg_router_ttft_seconds", &labels).record(ttft);
        histogram!("smg_router_tpot_seconds", &labels).record(tpot);
        histogram!("smg_router_request_duration_seconds", &labels).record(total);
        histogram!("smg_router_generation_duration_seconds", &labels).record(total - ttft);
    }
    counter!("smg_router_tokens_total",
        "router_type" => "regular", "backend_type" => "grpc", "model" => "llama-3-8b",
        "endpoint" => "/v1/chat/completions", "token_type" => "input")
    .increment(1200);
    counter!("smg_router_tokens_total",
        "router_type" => "regular", "backend_type" => "grpc", "model" => "llama-3-8b",
        "endpoint" => "/v1/chat/completions", "token_type" => "output")
    .increment(345);

    for worker in ["http://10.0.0.1:8000", "http://10.0.0.2:8000"] {
        gauge!("smg_worker_requests_active", "worker" => worker).set(3.0);
        gauge!("smg_worker_health", "worker" => worker).set(1.0);
        gauge!("smg_worker_cb_state", "worker" => worker).set(0.0);
    }
    // Worker removal: the facade cannot delete a series.
    gauge!("smg_worker_health", "worker" => "http://10.0.0.2:8000").set(-1.0);
    counter!("smg_worker_cb_transitions_total", "worker" => "http://10.0.0.1:8000", "from" => "closed", "to" => "open")
        .increment(1);
    // Described after its first record: HELP all the same.
    describe_gauge!(
        "smg_worker_health",
        "Worker health (1 healthy, 0 not, -1 removed)"
    );
    // Unmatched: a summary in the exporter, exponential here.
    histogram!("smg_worker_retry_backoff_seconds", "attempt" => "2").record(0.2);
    counter!("smg_db_items_stored", "storage_type" => "memory").absolute(40);
    counter!("smg_db_items_stored", "storage_type" => "memory").absolute(12);
    histogram!("smg_tokio_event_loop_delay_seconds").record(0.0007);
    histogram!("smg_tokio_event_loop_delay_seconds").record(0.02);
    // A recording-rule style name.
    counter!("smg:requests:by_model", "model" => "llama-3-8b").increment(3);
    // Duplicate label keys: the last wins.
    counter!("smg_dup_labels_total", "k" => "first", "k" => "last").increment(1);
    // Registered, never updated: 0.
    let _ = counter!("smg_registered_only_total");
    let _ = gauge!("smg_registered_only_gauge");
}

/// smg's builder chain, as it is.
fn oracle() -> PrometheusBuilder {
    PrometheusBuilder::new()
        .upkeep_timeout(Duration::from_secs(300))
        .set_buckets_for_metric(
            PromMatcher::Suffix("duration_seconds".into()),
            &DURATION_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Suffix("ttft_seconds".into()),
            &DURATION_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Suffix("tpot_seconds".into()),
            &DURATION_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Full("smg_tokio_event_loop_delay_seconds".into()),
            &EVENT_LOOP_DELAY_BUCKETS,
        )
        .unwrap()
        .add_global_label("gateway", "smg-0")
}

fn oracle_render(program: fn()) -> String {
    let recorder = oracle().build_recorder();
    let handle = recorder.handle();
    metrics::with_local_recorder(&recorder, program);
    handle.render()
}

/// smg's builder chain with `PrometheusBuilder` swapped for the bridge.
fn bridge() -> MetricsBridge {
    MetricsBridge::new()
        .upkeep_timeout(Duration::from_secs(300))
        .set_buckets_for_metric(
            Matcher::Suffix("duration_seconds".into()),
            &DURATION_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(Matcher::Suffix("ttft_seconds".into()), &DURATION_BUCKETS)
        .unwrap()
        .set_buckets_for_metric(Matcher::Suffix("tpot_seconds".into()), &DURATION_BUCKETS)
        .unwrap()
        .set_buckets_for_metric(
            Matcher::Full("smg_tokio_event_loop_delay_seconds".into()),
            &EVENT_LOOP_DELAY_BUCKETS,
        )
        .unwrap()
        .add_global_label("gateway", "smg-0")
}

#[test]
fn smg_families_match_metrics_exporter_prometheus() {
    let oracle = oracle_render(smg_program);
    let rendered = telemetry(&[]);
    let recorder = bridge().build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, smg_program);
    let text = rendered.text();

    let compared = assert_same_families(&oracle, &text);
    // Every counter, gauge and matched histogram the program records.
    assert_eq!(compared, 22, "compared {compared}: {oracle}");
    let bridge = families(&text);
    // Names as written: no `_total_total`, no unit suffix, `:` kept.
    assert!(!text.contains("_total_total"), "{text}");
    assert_eq!(bridge["smg:requests:by_model"].kind, "counter");
    assert_eq!(bridge["smg_db_items_stored"].kind, "counter");
    assert_eq!(
        bridge["smg_db_items_stored"].value(
            "smg_db_items_stored",
            &[("gateway", "smg-0"), ("storage_type", "memory")]
        ),
        Some(40.0),
        "absolute never lowers a counter"
    );
    assert_eq!(
        bridge["smg_dup_labels_total"].value(
            "smg_dup_labels_total",
            &[("gateway", "smg-0"), ("k", "last")]
        ),
        Some(1.0)
    );
    assert_eq!(
        bridge["smg_http_responses_total"].value(
            "smg_http_responses_total",
            &[
                ("error_code", "upstream"),
                ("gateway", "smg-0"),
                ("path", "/v1/chat/completions"),
                ("status_code", "429")
            ]
        ),
        Some(2.0),
        "both label orders reach one series"
    );
    assert_eq!(
        bridge["smg_admission_queue_depth"]
            .value("smg_admission_queue_depth", &[("gateway", "smg-0")]),
        Some(2.0),
        "gauge increments across fresh handles"
    );
    assert_eq!(
        bridge["smg_worker_health"].help.as_deref(),
        Some("Worker health (1 healthy, 0 not, -1 removed)")
    );
    assert!(!text.contains("smg_router_never_recorded_total"), "{text}");
    assert!(!text.contains("otel_scope_name"), "{text}");
    // The unmatched histogram: exponential, so powers of two in text.
    let backoff = &bridge["smg_worker_retry_backoff_seconds"];
    assert_eq!(backoff.kind, "histogram");
    assert_eq!(
        backoff.value(
            "smg_worker_retry_backoff_seconds_bucket",
            &[("attempt", "2"), ("gateway", "smg-0"), ("le", "0.25")]
        ),
        Some(1.0),
        "{text}"
    );
    // Matched histograms: exactly the matcher's buckets.
    let loop_delay = &bridge["smg_tokio_event_loop_delay_seconds"];
    let bounds: Vec<String> = loop_delay
        .samples
        .iter()
        .filter_map(|(_, l, _)| l.get("le").cloned())
        .collect();
    assert_eq!(
        bounds.len(),
        EVENT_LOOP_DELAY_BUCKETS.len() + 1,
        "{bounds:?}"
    );
}

/// The protobuf exposition's families: name, help, type.
#[derive(Clone, PartialEq, prost::Message)]
struct MetricFamily {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    help: String,
    #[prost(int32, tag = "3")]
    r#type: i32,
}

/// While a service migrates, both exporters run side by side behind
/// `metrics_util`'s fan-out: every macro call reaches both, and both
/// endpoints show the same families.
#[test]
fn the_bridge_runs_beside_the_exporter_in_a_fanout() {
    let prometheus = oracle().build_recorder();
    let oracle = prometheus.handle();
    let rendered = telemetry(&[]);
    let fanout = metrics_util::layers::FanoutBuilder::default()
        .add_recorder(prometheus)
        .add_recorder(bridge().build(&rendered.telemetry))
        .build();
    metrics::with_local_recorder(&fanout, smg_program);

    let compared = assert_same_families(&oracle.render(), &rendered.text());
    assert_eq!(compared, 22);
}

#[test]
fn protobuf_scrapes_keep_the_names_too() {
    use prost::Message as _;
    let rendered = telemetry(&[]);
    let recorder = bridge().build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, smg_program);
    let body = rendered.protobuf();
    let mut bytes = body.as_slice();
    let families: Vec<MetricFamily> =
        std::iter::from_fn(|| MetricFamily::decode_length_delimited(&mut bytes).ok()).collect();
    let find = |name: &str| {
        families.iter().find(|f| f.name == name).unwrap_or_else(|| {
            panic!(
                "{name} in {:?}",
                families.iter().map(|f| &f.name).collect::<Vec<_>>()
            )
        })
    };
    // Counter 0, gauge 1, histogram 4.
    assert_eq!(find("smg_http_requests_total").r#type, 0);
    assert_eq!(find("smg_http_requests_total").help, "Total HTTP requests");
    assert_eq!(find("smg_db_items_stored").r#type, 0);
    assert_eq!(find("smg:requests:by_model").r#type, 0);
    assert_eq!(find("smg_worker_health").r#type, 1);
    assert_eq!(find("smg_router_ttft_seconds").r#type, 4);
    assert_eq!(find("smg_worker_retry_backoff_seconds").r#type, 4);
    assert!(families.iter().all(|f| !f.name.ends_with("_total_total")));
}

#[test]
fn other_instruments_keep_nemo_lens_naming() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new().build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, || counter!("bridged_requests").increment(1));
    rendered
        .telemetry
        .meter
        .otel()
        .u64_counter("app.requests")
        .with_unit("s")
        .build()
        .add(1, &[]);
    let text = rendered.text();
    assert!(
        text.contains("# TYPE app_requests_seconds_total counter\n"),
        "{text}"
    );
    assert!(
        text.contains("app_requests_seconds_total{otel_scope_name=\"nemo.lens\""),
        "{text}"
    );
    assert!(
        text.contains("# TYPE bridged_requests counter\nbridged_requests 1\n"),
        "{text}"
    );
}

/// Everything written through `tracing` while it is alive, on this thread.
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_name_used_as_two_kinds_is_one_family_and_a_warning() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new().build(&rendered.telemetry);
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        metrics::with_local_recorder(&recorder, || {
            counter!("two_kinds").increment(3);
            gauge!("two_kinds").set(9.0);
            gauge!("two_kinds").set(10.0);
            counter!("two_kinds").increment(1);
        });
    });
    let text = rendered.text();
    assert_eq!(text.matches("# TYPE two_kinds ").count(), 1, "{text}");
    assert!(
        text.contains("# TYPE two_kinds counter\ntwo_kinds 4\n"),
        "{text}"
    );
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert_eq!(
        logs.matches("metric `two_kinds` is recorded as a counter and as a gauge")
            .count(),
        1,
        "warned once: {logs}"
    );
}

#[test]
fn held_handles_never_expire_and_idle_series_do() {
    use metrics_util::MetricKindMask;
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .idle_timeout(MetricKindMask::ALL, Some(Duration::from_millis(50)))
        .build(&rendered.telemetry);
    let held = metrics::with_local_recorder(&recorder, || {
        counter!("idle_inline").increment(1);
        let held = counter!("idle_held");
        held.increment(1);
        gauge!("idle_gauge").set(2.0);
        let held_gauge = gauge!("idle_held_gauge");
        held_gauge.set(4.0);
        (held, held_gauge)
    });
    let (held, held_gauge) = held;
    // The first collection notes when each series was last updated.
    let text = rendered.text();
    assert!(text.contains("idle_inline 1\n"), "{text}");
    std::thread::sleep(Duration::from_millis(120));
    let text = rendered.text();
    assert!(!text.contains("idle_inline"), "expired: {text}");
    assert!(!text.contains("idle_gauge"), "expired: {text}");
    assert!(
        text.contains("idle_held 1\n"),
        "held, never expires: {text}"
    );
    assert!(
        text.contains("idle_held_gauge 4\n"),
        "held, never expires: {text}"
    );
    // The held handle still counts; an expired series starts over.
    held.increment(2);
    held_gauge.increment(1.0);
    metrics::with_local_recorder(&recorder, || {
        counter!("idle_inline").increment(5);
        // A fresh handle to the held gauge: the same series.
        gauge!("idle_held_gauge").increment(1.0);
    });
    let text = rendered.text();
    assert!(text.contains("idle_held 3\n"), "{text}");
    assert!(text.contains("idle_held_gauge 6\n"), "{text}");
    assert!(text.contains("idle_inline 5\n"), "{text}");
}

#[test]
fn an_idle_telemetry_gives_no_op_handles() {
    let idle = {
        let config = nemo_lens::NemoLensConfig::from_lookup(nemo_lens::EnvLookup::from_pairs::<
            &str,
            &str,
        >([]))
        .unwrap();
        nemo_lens::SetupOptions::new()
            .env(nemo_lens::EnvLookup::from_pairs::<&str, &str>([]))
            .setup(&config, 0, 1)
            .unwrap()
    };
    assert!(!idle.is_exporting);
    let recorder = MetricsBridge::new().build(&idle);
    metrics::with_local_recorder(&recorder, || counter!("nothing").increment(1));
}

#[test]
fn builder_errors_name_the_problem() {
    let err = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &[1.0, 0.5])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid histogram buckets for Suffix(\"_seconds\"): boundaries must be strictly \
         increasing, but 0.5 follows 1"
    );
    let err: Box<dyn std::error::Error> =
        Box::new(MetricsBridge::new().set_buckets(&[]).unwrap_err());
    assert!(err.to_string().contains("no bucket boundaries"), "{err}");
    let err = MetricsBridge::new()
        .set_bucket_duration(Duration::MAX)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid summary setting: set_bucket_duration(18446744073709551615."),
        "{err}"
    );
    let err = MetricsBridge::new()
        .set_quantiles(&[0.5, f64::NAN])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid summary setting: set_quantiles: quantile 1 is NaN"
    );
    // A window past what a `Duration` holds, by the bucket count set after
    // the duration, records without overflowing.
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_bucket_duration(Duration::from_secs(u64::MAX / 4))
        .unwrap()
        .set_bucket_count(std::num::NonZeroU32::MAX)
        .set_summary_for_metric(Matcher::Full("huge_window_seconds".into()))
        .build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, || {
        histogram!("huge_window_seconds").record(1.0);
        histogram!("huge_window_seconds").record(2.0);
    });
    let text = rendered.text();
    assert!(text.contains("huge_window_seconds_count 2\n"), "{text}");
}

#[test]
fn the_cardinality_limit_and_its_warning_apply_to_bridged_series() {
    let rendered = telemetry(&[("NEMO_LENS_CARDINALITY_LIMIT", "4")]);
    let recorder = MetricsBridge::new().build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, || {
        for worker in 0..10 {
            let worker = format!("http://10.0.0.{worker}:8000");
            gauge!("bridge:worker_health", "worker" => worker.clone()).set(1.0);
            counter!("bridge_worker_requests_total", "worker" => worker).increment(2);
        }
    });
    let text = rendered.text();
    let bridge = families(&text);
    for name in ["bridge:worker_health", "bridge_worker_requests_total"] {
        let family = &bridge[name];
        // The first `limit` sets, and one merging the rest.
        assert_eq!(family.samples.len(), 5, "{text}");
        assert!(
            family.samples.iter().any(|(_, labels, _)| labels
                .get("otel_metric_overflow")
                .map(String::as_str)
                == Some("true")),
            "{text}"
        );
        assert!(
            rendered
                .telemetry
                .overflowing_instruments()
                .iter()
                .any(|n| n == name),
            "warned under the name as written: {:?}",
            rendered.telemetry.overflowing_instruments()
        );
    }
    let counter = &bridge["bridge_worker_requests_total"];
    let total: f64 = counter.samples.iter().map(|(_, _, v)| v).sum();
    assert_eq!(total, 20.0, "nothing lost in the overflow series");
}

#[test]
fn opted_in_summaries_have_the_exporter_s_shape_and_exact_quantiles() {
    fn value(i: i32) -> f64 {
        0.01 * 1.03f64.powi(i)
    }
    fn attempt(i: i32) -> &'static str {
        if i % 3 == 0 {
            "1"
        } else {
            "2"
        }
    }
    fn program() {
        describe_histogram!("smg_worker_retry_backoff_seconds", "Retry backoff");
        for i in 0..200 {
            histogram!("smg_worker_retry_backoff_seconds", "attempt" => attempt(i))
                .record(value(i));
        }
    }
    let oracle = {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, program);
        handle.render()
    };
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_summary_for_metric(Matcher::Full("smg_worker_retry_backoff_seconds".into()))
        .build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, program);
    let text = rendered.text();
    let expected = &families(&oracle)["smg_worker_retry_backoff_seconds"];
    let actual = &families(&text)["smg_worker_retry_backoff_seconds"];
    assert_eq!(expected.kind, "summary");
    assert_eq!(actual.kind, "summary", "{text}");
    assert_eq!(actual.help, expected.help);
    // The same samples: 2 series × (7 quantiles, _sum, _count), the same
    // label sets (quantile labels included), the same sums and counts.
    assert_eq!(actual.samples.len(), 18, "{text}");
    assert_eq!(actual.samples.len(), expected.samples.len(), "{oracle}");
    for ((an, al, av), (en, el, ev)) in actual.samples.iter().zip(&expected.samples) {
        assert_eq!((an, al), (en, el));
        if an.ends_with("_sum") || an.ends_with("_count") {
            assert!(
                (av - ev).abs() <= 1e-9 * ev.abs().max(1.0),
                "{an}{al:?}: {av} vs {ev}"
            );
            continue;
        }
        // Quantiles over every sample of the window, within the sketch's
        // accuracy of the exact ones. (The exporter's own cover only the
        // newest block of samples its upkeep drained: it starts the window
        // at that block and leaves older samples of the same drain out.)
        let q: f64 = al["quantile"].parse().unwrap();
        let mut values: Vec<f64> = (0..200)
            .filter(|i| attempt(*i) == al["attempt"])
            .map(value)
            .collect();
        values.sort_by(f64::total_cmp);
        // The sketch's rank is q·(n-1); nearest-rank conventions differ by
        // one sample.
        let rank = (q * (values.len() - 1) as f64).round() as usize;
        let near = &values[rank.saturating_sub(1)..(rank + 2).min(values.len())];
        assert!(
            near.iter().any(|exact| (av - exact).abs() <= 0.01 * exact),
            "{an}{al:?}: {av} vs exact {near:?}"
        );
    }
    // Protobuf too: one family of type SUMMARY.
    use prost::Message as _;
    let body = rendered.protobuf();
    let mut bytes = body.as_slice();
    let family = std::iter::from_fn(|| MetricFamily::decode_length_delimited(&mut bytes).ok())
        .find(|f| f.name == "smg_worker_retry_backoff_seconds")
        .expect("the summary family");
    assert_eq!(family.r#type, 2);
}

#[test]
fn record_many_and_inline_descriptions() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_buckets(&[1.0, 10.0])
        .unwrap()
        .build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, || {
        for _ in 0..3 {
            // A description in the macro describes on every call.
            counter!(description: "Described inline", "inline_described_total").increment(1);
        }
        histogram!("batch_sizes").record_many(4.0, 5);
        histogram!("batch_sizes").record(20.0);
    });
    let text = rendered.text();
    assert!(
        text.contains(
            "# HELP inline_described_total Described inline\n\
             # TYPE inline_described_total counter\ninline_described_total 3\n"
        ),
        "{text}"
    );
    // `set_buckets` covers every histogram no matcher selects.
    for line in [
        "batch_sizes_bucket{le=\"1\"} 0\n",
        "batch_sizes_bucket{le=\"10\"} 5\n",
        "batch_sizes_bucket{le=\"+Inf\"} 6\n",
        "batch_sizes_sum 40\n",
        "batch_sizes_count 6\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

#[test]
fn threads_registering_and_recording_at_once_lose_nothing() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_buckets(&[0.5])
        .unwrap()
        .build(&rendered.telemetry);
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let recorder = &recorder;
            scope.spawn(move || {
                metrics::with_local_recorder(recorder, || {
                    for i in 0..5_000u64 {
                        // One series every thread shares, and new series
                        // registered while the others look theirs up.
                        counter!("race_shared_total").increment(1);
                        let worker = format!("w{}", i % 50);
                        counter!("race_by_worker_total", "worker" => worker).increment(1);
                        gauge!("race_inflight").increment(1.0);
                        gauge!("race_inflight").decrement(1.0);
                        histogram!("race_seconds", "thread" => thread.to_string()).record(0.1);
                    }
                })
            });
        }
    });
    let text = rendered.text();
    let bridge = families(&text);
    assert_eq!(
        bridge["race_shared_total"].value("race_shared_total", &[]),
        Some(20_000.0)
    );
    let by_worker = &bridge["race_by_worker_total"];
    assert_eq!(by_worker.samples.len(), 50, "{text}");
    assert!(
        by_worker.samples.iter().all(|(_, _, v)| *v == 400.0),
        "{text}"
    );
    assert_eq!(
        bridge["race_inflight"].value("race_inflight", &[]),
        Some(0.0)
    );
    let counts: f64 = bridge["race_seconds"]
        .samples
        .iter()
        .filter(|(name, _, _)| name == "race_seconds_count")
        .map(|(_, _, v)| v)
        .sum();
    assert_eq!(counts, 20_000.0);
}

/// Keys that differ but reduce to one label set (duplicate label keys, label
/// names sanitizing alike, a label repeating a global one) reach one series,
/// whose value is the sum of every call: never two series with one label
/// set, of which a scrape would keep one.
#[test]
fn keys_reducing_to_one_label_set_are_one_series() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .add_global_label("service", "router")
        .set_summary_for_metric(Matcher::Full("merge_summary_seconds".into()))
        .build(&rendered.telemetry);
    metrics::with_local_recorder(&recorder, || {
        counter!("merge_total", "k" => "a", "k" => "z").increment(1);
        counter!("merge_total", "k" => "z").increment(2);
        counter!("merge_total", "a-b" => "1").increment(1);
        counter!("merge_total", "a_b" => "1").increment(4);
        counter!("merge_total", "service" => "router").increment(7);
        counter!("merge_total").increment(1);
        gauge!("merge_gauge", "a-b" => "1").increment(1.0);
        gauge!("merge_gauge", "a_b" => "1").increment(2.0);
        histogram!("merge_summary_seconds", "a-b" => "1").record(1.0);
        histogram!("merge_summary_seconds", "a_b" => "1").record(3.0);
    });
    let text = rendered.text();
    let bridge = families(&text);
    let counter = &bridge["merge_total"];
    assert_eq!(counter.samples.len(), 3, "{text}");
    for (labels, expected) in [
        (&[("k", "z"), ("service", "router")][..], 3.0),
        (&[("a_b", "1"), ("service", "router")][..], 5.0),
        (&[("service", "router")][..], 8.0),
    ] {
        assert_eq!(
            counter.value("merge_total", labels),
            Some(expected),
            "{labels:?}: {text}"
        );
    }
    let gauge = &bridge["merge_gauge"];
    assert_eq!(gauge.samples.len(), 1, "{text}");
    assert_eq!(
        gauge.value("merge_gauge", &[("a_b", "1"), ("service", "router")]),
        Some(3.0)
    );
    let summary = &bridge["merge_summary_seconds"];
    let labels = [("a_b", "1"), ("service", "router")];
    assert_eq!(
        summary.value("merge_summary_seconds_count", &labels),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        summary.value("merge_summary_seconds_sum", &labels),
        Some(4.0)
    );
    assert_eq!(summary.samples.len(), 9, "one series: {text}");
}

/// Threads racing a key's first registration make one summary series, not
/// one each (a duplicate would be a second sample of one label set).
#[test]
fn threads_racing_a_first_registration_make_one_summary_series() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_summary_for_metric(Matcher::Prefix("race_summary_".into()))
        .build(&rendered.telemetry);
    const ROUNDS: usize = 100;
    const THREADS: usize = 4;
    for round in 0..ROUNDS {
        let name = format!("race_summary_{round}");
        let barrier = std::sync::Barrier::new(THREADS);
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    barrier.wait();
                    metrics::with_local_recorder(&recorder, || {
                        histogram!(name.clone(), "route" => "/v1").record(1.0)
                    });
                });
            }
        });
    }
    let text = rendered.text();
    let bridge = families(&text);
    for round in 0..ROUNDS {
        let name = format!("race_summary_{round}");
        let counts: Vec<f64> = bridge[&name]
            .samples
            .iter()
            .filter(|(sample, _, _)| *sample == format!("{name}_count"))
            .map(|(_, _, v)| *v)
            .collect();
        assert_eq!(counts, [THREADS as f64], "{name}: {text}");
    }
}

/// An endpoint shows the summaries and HELP of the bridges whose
/// instruments its own provider collects: those of a bridge built on an
/// earlier telemetry (set up again since) neither appear on it nor hide its
/// own histogram of that name; two bridges of one telemetry summarising one
/// name both show.
#[test]
fn summaries_and_help_stay_with_their_bridge() {
    let earlier = telemetry(&[]);
    let bridge_earlier = MetricsBridge::new()
        .set_summary_for_metric(Matcher::Full("iso_seconds".into()))
        .build(&earlier.telemetry);
    metrics::with_local_recorder(&bridge_earlier, || {
        describe_counter!("iso_total", "Described by the earlier bridge");
        counter!("iso_total").increment(1);
        histogram!("iso_seconds").record(0.5);
    });
    // Shuts the earlier telemetry down; its bridge lives on.
    let (telemetry, renderer) = another_telemetry(&[]);
    let bridge = MetricsBridge::new()
        .set_buckets(&[1.0])
        .unwrap()
        .build(&telemetry);
    let summarising = |label: &str| {
        MetricsBridge::new()
            .set_summary_for_metric(Matcher::Full("both_seconds".into()))
            .add_global_label("bridge", label)
            .build(&telemetry)
    };
    let (first, second) = (summarising("first"), summarising("second"));
    metrics::with_local_recorder(&bridge, || {
        counter!("iso_total").increment(2);
        histogram!("iso_seconds").record(0.5);
        describe_histogram!("iso_seconds", "Described by this bridge");
    });
    metrics::with_local_recorder(&first, || histogram!("both_seconds").record(0.5));
    metrics::with_local_recorder(&second, || histogram!("both_seconds").record(0.25));

    let text = String::from_utf8(
        renderer
            .render_as(nemo_lens::prometheus::Format::Text)
            .unwrap()
            .body,
    )
    .unwrap();
    let families = families(&text);
    let histogram = &families["iso_seconds"];
    assert_eq!(histogram.kind, "histogram", "{text}");
    assert_eq!(histogram.help.as_deref(), Some("Described by this bridge"));
    assert_eq!(
        histogram.value("iso_seconds_bucket", &[("le", "1")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(families["iso_total"].help, None, "{text}");
    assert_eq!(families["iso_total"].value("iso_total", &[]), Some(2.0));
    let both = &families["both_seconds"];
    assert_eq!(both.kind, "summary", "{text}");
    for (label, sum) in [("first", 0.5), ("second", 0.25)] {
        assert_eq!(
            both.value("both_seconds_sum", &[("bridge", label)]),
            Some(sum),
            "{label}: {text}"
        );
    }
    drop(bridge_earlier);
}

/// A `histogram!` recorded in a sampled span carries its exemplar to the
/// OpenMetrics exposition Prometheus asks for, without a change at the
/// call site (`metrics` has no exemplar API).
#[test]
fn a_histogram_recorded_in_a_sampled_span_has_its_exemplar_on_prometheus() {
    use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
    let rendered = telemetry(&[]);
    let bridge = MetricsBridge::new()
        .set_buckets(&[0.1, 1.0])
        .unwrap()
        .build(&rendered.telemetry);
    let span = nemo_lens::exemplar::SpanIds::new(
        TraceId::from(0x5b8e_fff7_9809_8c77_0000_0000_0000_0001),
        SpanId::from(0x51_u64),
    );
    metrics::with_local_recorder(&bridge, || {
        histogram!("gateway_request_seconds", "route" => "/v1/chat").record(0.05);
        nemo_lens::exemplar::in_span(Some(span), || {
            histogram!("gateway_request_seconds", "route" => "/v1/chat").record(0.5)
        });
    });
    let body = rendered
        .renderer
        .render_as(nemo_lens::prometheus::Format::OpenMetrics)
        .unwrap()
        .body;
    let text = String::from_utf8(body).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("gateway_request_seconds_bucket{") && l.contains("le=\"1\""))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "}} 2 # {{trace_id=\"5b8efff798098c770000000000000001\",span_id=\"{:016x}\"}} 0.5 ",
            0x51
        )),
        "{line}"
    );
    // Only that bucket: the other record was in no span.
    assert_eq!(text.matches(" # {").count(), 1, "{text}");
    assert!(text.ends_with("# EOF\n"));
}
