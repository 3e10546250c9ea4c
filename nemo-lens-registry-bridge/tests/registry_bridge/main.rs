//! The registry bridge against each crate's own encoder: a program of
//! registrations and records (counters and counter vectors, gauges,
//! histograms with custom buckets, an info family, summaries, labels
//! and HELP that need escaping) rendered by the crate's text encoder and
//! scraped from nemo-lens's endpoint agree family by family: name, type,
//! HELP, label sets and values. Then what nemo-lens adds: resource labels
//! and `target_info`, and the cardinality limit per family.
//!
//! Run twice by the README's test command: with every feature (`prometheus`
//! with its `protobuf` feature, as most users build it) and with
//! `--features prometheus,prometheus-client` (without it), the two shapes
//! of the `prometheus` crate's types.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nemo_lens::registry_bridge::{RegistryBridge, RegistryBridgeError};
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};
use prometheus::{Encoder as _, Gauge, HistogramOpts, HistogramVec, IntCounter, IntCounterVec};
use prometheus::{IntGaugeVec, Opts};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge as ClientGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Unit;

use nemo_lens_test_support::exclusive;
use nemo_lens_test_support::metrics_bridge::families;
use nemo_lens_test_support::servers::{free_port, http_get};

/// Label values that need escaping in the text format.
const AWKWARD: [&str; 3] = ["say \"hi\"", "back\\slash", "new\nline"];

/// Telemetry serving nemo-lens's Prometheus endpoint on a free loopback
/// port, with `extra` variables.
fn serving(extra: &[(&str, &str)]) -> (TelemetryHandle, u16) {
    let port = free_port();
    let port_text = port.to_string();
    let mut pairs = vec![
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port_text.as_str()),
        ("OTEL_SERVICE_NAME", "dynamo-frontend"),
    ];
    pairs.extend_from_slice(extra);
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs)).expect("config");
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .allow_reinit(true)
        .set_global(false)
        .setup(&config, 0, 1)
        .expect("setup");
    (telemetry, port)
}

fn scrape(port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(body) = http_get(port, "/metrics") {
            return body;
        }
        assert!(Instant::now() < deadline, "nothing answers on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every family of `oracle` is in `scraped` with the same type, HELP
/// (an empty one may be left out), label sets and values, and `scraped`
/// has no other family but `target_info`. Returns how many were compared.
fn assert_identical(oracle: &str, scraped: &str) -> usize {
    let oracle = families(oracle);
    let mut scraped = families(scraped);
    scraped.remove("target_info");
    assert_eq!(
        scraped.keys().collect::<Vec<_>>(),
        oracle.keys().collect::<Vec<_>>(),
        "the same families"
    );
    for (name, expected) in &oracle {
        let actual = &scraped[name];
        assert_eq!(actual.kind, expected.kind, "TYPE of {name}");
        let help = |h: &Option<String>| h.clone().unwrap_or_default();
        assert_eq!(help(&actual.help), help(&expected.help), "HELP of {name}");
        assert_eq!(
            actual.label_sets(),
            expected.label_sets(),
            "label sets of {name}"
        );
        let samples = |f: &nemo_lens_test_support::metrics_bridge::Family| {
            f.samples
                .iter()
                .map(|(n, l, v)| (n.clone(), l.clone(), v.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(samples(actual), samples(expected), "samples of {name}");
    }
    oracle.len()
}

/// What a service's own collector exports: a summary, a type the crate's
/// metrics never make. (Untyped families, which the crate's text encoder
/// cannot write, are the registry bridge crate's own test: building one
/// differs between the two shapes of the crate's types.)
struct QueueStats {
    descs: Vec<prometheus::core::Desc>,
}

impl QueueStats {
    fn new() -> Self {
        let desc = |name: &str, help: &str| {
            prometheus::core::Desc::new(
                name.into(),
                help.into(),
                vec!["queue".into()],
                Default::default(),
            )
            .unwrap()
        };
        QueueStats {
            descs: vec![desc("dynamo_frontend_queue_wait_seconds", "Queue wait")],
        }
    }
}

impl prometheus::core::Collector for QueueStats {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType, Quantile, Summary};
        let metric = |queue: &str| {
            let mut label = LabelPair::default();
            label.set_name("queue".into());
            label.set_value(queue.into());
            let mut metric = Metric::default();
            metric.set_label(vec![label]);
            metric
        };
        let mut wait = MetricFamily::default();
        wait.set_name("dynamo_frontend_queue_wait_seconds".into());
        wait.set_help("Queue wait".into());
        wait.set_field_type(MetricType::SUMMARY);
        let mut summary = Summary::default();
        summary.set_sample_count(40);
        summary.set_sample_sum(2.5);
        summary.set_quantile(
            [(0.5, 0.05), (0.99, 0.4)]
                .into_iter()
                .map(|(q, v)| {
                    let mut quantile = Quantile::default();
                    quantile.set_quantile(q);
                    quantile.set_value(v);
                    quantile
                })
                .collect(),
        );
        let mut waited = metric("prefill");
        waited.set_summary(summary);
        wait.set_metric(vec![waited]);
        vec![wait]
    }
}

/// A `prometheus` registry shaped like Dynamo's frontend, recorded into.
fn prometheus_registry() -> prometheus::Registry {
    let registry = prometheus::Registry::new();
    let requests = IntCounterVec::new(
        Opts::new(
            "dynamo_frontend_requests_total",
            "Total LLM requests processed",
        ),
        &["model", "endpoint", "request_type", "status"],
    )
    .unwrap();
    let migrations = IntCounter::new(
        "dynamo_frontend_model_migration_total",
        "Migrations\nof a request \\ to another worker",
    )
    .unwrap();
    let inflight = Gauge::new(
        "dynamo_frontend_inflight_requests",
        "Number of inflight requests",
    )
    .unwrap();
    let queued = IntGaugeVec::new(
        Opts::new("dynamo_frontend_queued_requests", "Requests queued"),
        &["model"],
    )
    .unwrap();
    let ttft = HistogramVec::new(
        HistogramOpts::new(
            "dynamo_frontend_time_to_first_token_seconds",
            "Time to first token",
        )
        .buckets(vec![0.001, 0.005, 0.025, 0.1, 0.5, 2.5]),
        &["model"],
    )
    .unwrap();
    let build = IntGaugeVec::new(
        Opts::new("dynamo_frontend_build_info", "Build information"),
        &["version", "git_sha"],
    )
    .unwrap();
    for metric in [
        Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(migrations.clone()),
        Box::new(inflight.clone()),
        Box::new(queued.clone()),
        Box::new(ttft.clone()),
        Box::new(build.clone()),
        Box::new(QueueStats::new()),
    ] {
        registry.register(metric).unwrap();
    }
    for (i, model) in ["llama", AWKWARD[0], AWKWARD[1], AWKWARD[2]]
        .iter()
        .enumerate()
    {
        requests
            .with_label_values(&[model, "chat_completions", "stream", "success"])
            .inc_by(i as u64 + 1);
        queued.with_label_values(&[model]).set(i as i64 * 2);
        for value in [0.0004, 0.003, 0.07 * (i + 1) as f64, 9.0] {
            ttft.with_label_values(&[model]).observe(value);
        }
    }
    requests
        .with_label_values(&["llama", "completions", "unary", "error"])
        .inc();
    migrations.inc_by(2);
    inflight.set(3.5);
    build.with_label_values(&["0.4.1", "abc123"]).set(1);
    registry
}

fn prometheus_text(registry: &prometheus::Registry) -> String {
    let mut out = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    model: String,
    status: String,
}

/// A `prometheus-client` registry, recorded into.
fn client_registry() -> prometheus_client::registry::Registry {
    let mut registry = prometheus_client::registry::Registry::default();
    let requests = Family::<RequestLabels, Counter>::default();
    registry.register(
        "router_requests",
        "Requests routed \\ by model\nand status",
        requests.clone(),
    );
    let inflight: ClientGauge = ClientGauge::default();
    registry.register("router_inflight", "Requests in flight", inflight.clone());
    let load = ClientGauge::<f64, std::sync::atomic::AtomicU64>::default();
    registry.register("router_load", "Load", load.clone());
    let latency = Family::<RequestLabels, Histogram>::new_with_constructor(|| {
        Histogram::new([0.01, 0.1, 1.0])
    });
    registry.register_with_unit("router_latency", "Latency", Unit::Seconds, latency.clone());
    registry.register(
        "router_build",
        "Build",
        Info::new(vec![("version", "1.0.0"), ("commit", "a\"b")]),
    );
    let worker = registry.sub_registry_with_prefix("worker");
    let worker_tokens: Counter<f64, std::sync::atomic::AtomicU64> = Counter::default();
    worker.register("tokens", "Tokens generated", worker_tokens.clone());

    for (i, model) in ["llama", AWKWARD[0], AWKWARD[1], AWKWARD[2]]
        .iter()
        .enumerate()
    {
        let labels = RequestLabels {
            model: model.to_string(),
            status: "200".into(),
        };
        requests.get_or_create(&labels).inc_by(i as u64 + 1);
        for value in [0.005, 0.05 * (i + 1) as f64, 4.0] {
            latency.get_or_create(&labels).observe(value);
        }
    }
    inflight.set(7);
    load.set(0.25);
    worker_tokens.inc_by(1.5);
    registry
}

fn client_text(registry: &prometheus_client::registry::Registry) -> String {
    let mut out = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut out, registry).unwrap();
    out
}

#[test]
fn a_prometheus_registry_scrapes_as_its_own_encoder_writes_it() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none")]);
    let registry = prometheus_registry();
    RegistryBridge::new()
        .prometheus(registry.clone())
        .install(&telemetry)
        .unwrap();
    let compared = assert_identical(&prometheus_text(&registry), &scrape(port));
    assert_eq!(compared, 7);
    telemetry.shutdown().unwrap();
}

#[test]
fn a_prometheus_client_registry_scrapes_as_its_own_encoder_writes_it() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none")]);
    let registry = Arc::new(client_registry());
    RegistryBridge::new()
        .prometheus_client(Arc::clone(&registry))
        .install(&telemetry)
        .unwrap();
    let oracle = client_text(&registry);
    let scraped = scrape(port);
    let compared = assert_identical(&oracle, &scraped);
    assert_eq!(compared, 6);
    // The crate's names: `_total`, `_info` and the unit suffix.
    let scraped = families(&scraped);
    assert_eq!(scraped["router_requests_total"].kind, "counter");
    assert_eq!(scraped["router_build_info"].kind, "gauge");
    assert_eq!(scraped["router_latency_seconds"].kind, "histogram");
    assert_eq!(
        scraped["router_requests_total"].value(
            "router_requests_total",
            &[("model", AWKWARD[2]), ("status", "200")]
        ),
        Some(4.0)
    );
    telemetry.shutdown().unwrap();
}

#[test]
fn bridged_series_carry_the_resource_labels_beside_target_info() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_RUN_ID", "run-7")]);
    let mut client = prometheus_client::registry::Registry::default();
    let counter: Counter = Counter::default();
    client.register("jobs", "Jobs", counter.clone());
    counter.inc();
    RegistryBridge::new()
        .prometheus(prometheus_registry())
        .prometheus_client(Arc::new(client))
        .install(&telemetry)
        .unwrap();
    let scraped = families(&scrape(port));
    assert!(scraped.contains_key("target_info"), "{:?}", scraped.keys());
    for name in ["dynamo_frontend_requests_total", "jobs_total"] {
        for labels in scraped[name].label_sets() {
            assert_eq!(
                labels.get("service_name").map(String::as_str),
                Some("dynamo-frontend"),
                "{name}"
            );
            assert_eq!(
                labels.get("nemo_run_id").map(String::as_str),
                Some("run-7"),
                "{name}"
            );
        }
    }
    assert_eq!(
        scraped["jobs_total"].value(
            "jobs_total",
            &[
                ("service_name", "dynamo-frontend"),
                ("nemo_run_id", "run-7"),
                (
                    "service_instance_id",
                    &scraped["jobs_total"].samples[0].1["service_instance_id"]
                ),
                ("dl_rank", "0"),
            ]
        ),
        Some(1.0)
    );
    telemetry.shutdown().unwrap();
}

#[test]
fn each_family_keeps_to_the_cardinality_limit() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[
        ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none"),
        ("NEMO_LENS_CARDINALITY_LIMIT", "3"),
    ]);
    let registry = prometheus::Registry::new();
    let by_user = IntCounterVec::new(
        Opts::new("gateway_user_requests_total", "By user"),
        &["user"],
    )
    .unwrap();
    registry.register(Box::new(by_user.clone())).unwrap();
    for user in 0..5u64 {
        by_user
            .with_label_values(&[&format!("u{user}")])
            .inc_by(user + 1);
    }
    RegistryBridge::new()
        .prometheus(registry)
        .install(&telemetry)
        .unwrap();

    let family = &families(&scrape(port))["gateway_user_requests_total"];
    // The first three label sets seen, then one series for the rest.
    assert_eq!(family.samples.len(), 4, "{:?}", family.samples);
    assert_eq!(
        family.value(
            "gateway_user_requests_total",
            &[("otel_metric_overflow", "true")]
        ),
        Some(4.0 + 5.0)
    );
    let total: f64 = family.samples.iter().map(|(_, _, v)| v).sum();
    assert_eq!(total, 15.0, "nothing recorded is lost");
    assert!(telemetry
        .overflowing_instruments()
        .contains(&"gateway_user_requests_total".to_owned()));
    // Later scrapes keep the same three.
    by_user.with_label_values(&["u9"]).inc();
    let again = &families(&scrape(port))["gateway_user_requests_total"];
    assert_eq!(again.label_sets(), family.label_sets());
    assert_eq!(
        again.value(
            "gateway_user_requests_total",
            &[("otel_metric_overflow", "true")]
        ),
        Some(10.0)
    );
    telemetry.shutdown().unwrap();
}

#[test]
fn install_names_what_is_missing() {
    let _turn = exclusive();
    let (telemetry, _port) = serving(&[]);
    let error = RegistryBridge::new().install(&telemetry).unwrap_err();
    assert_eq!(error, RegistryBridgeError::NoRegistry);
    assert!(
        error.to_string().contains(".prometheus(registry)"),
        "{error}"
    );
    telemetry.shutdown().unwrap();
}

#[test]
fn a_prometheus_client_family_past_the_limit_is_merged() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[
        ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none"),
        ("NEMO_LENS_CARDINALITY_LIMIT", "3"),
    ]);
    let mut registry = prometheus_client::registry::Registry::default();
    let by_user = Family::<Vec<(String, String)>, Counter>::default();
    registry.register("gateway_client_user_requests", "By user", by_user.clone());
    let small: Counter = Counter::default();
    registry.register("gateway_client_restarts", "Restarts", small.clone());
    small.inc();
    for user in 0..5u64 {
        by_user
            .get_or_create(&vec![("user".to_owned(), format!("u{user}"))])
            .inc_by(user + 1);
    }
    RegistryBridge::new()
        .prometheus_client(Arc::new(registry))
        .install(&telemetry)
        .unwrap();
    let scraped = families(&scrape(port));
    let family = &scraped["gateway_client_user_requests_total"];
    assert_eq!(family.samples.len(), 4, "{:?}", family.samples);
    let overflow = family.value(
        "gateway_client_user_requests_total",
        &[("otel_metric_overflow", "true")],
    );
    let total: f64 = family.samples.iter().map(|(_, _, v)| v).sum();
    assert_eq!(total, 15.0, "nothing recorded is lost");
    assert!(overflow.is_some_and(|v| v >= 3.0), "{:?}", family.samples);
    // The family within the limit is there as written.
    assert_eq!(
        scraped["gateway_client_restarts_total"].value("gateway_client_restarts_total", &[]),
        Some(1.0)
    );
    assert!(telemetry
        .overflowing_instruments()
        .contains(&"gateway_client_user_requests_total".to_owned()));
    telemetry.shutdown().unwrap();
}

/// `io.prometheus.client.MetricFamily`, the fields the test reads.
mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct LabelPair {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub value: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Value {
        #[prost(double, tag = "1")]
        pub value: f64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Bucket {
        #[prost(uint64, tag = "1")]
        pub cumulative_count: u64,
        #[prost(double, tag = "2")]
        pub upper_bound: f64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Histogram {
        #[prost(uint64, tag = "1")]
        pub sample_count: u64,
        #[prost(double, tag = "2")]
        pub sample_sum: f64,
        #[prost(message, repeated, tag = "3")]
        pub bucket: Vec<Bucket>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Quantile {
        #[prost(double, tag = "1")]
        pub quantile: f64,
        #[prost(double, tag = "2")]
        pub value: f64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Summary {
        #[prost(uint64, tag = "1")]
        pub sample_count: u64,
        #[prost(double, tag = "2")]
        pub sample_sum: f64,
        #[prost(message, repeated, tag = "3")]
        pub quantile: Vec<Quantile>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Metric {
        #[prost(message, repeated, tag = "1")]
        pub label: Vec<LabelPair>,
        #[prost(message, optional, tag = "4")]
        pub summary: Option<Summary>,
        #[prost(message, optional, tag = "2")]
        pub gauge: Option<Value>,
        #[prost(message, optional, tag = "3")]
        pub counter: Option<Value>,
        #[prost(message, optional, tag = "5")]
        pub untyped: Option<Value>,
        #[prost(message, optional, tag = "7")]
        pub histogram: Option<Histogram>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct MetricFamily {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub help: String,
        #[prost(int32, tag = "3")]
        pub r#type: i32,
        #[prost(message, repeated, tag = "4")]
        pub metric: Vec<Metric>,
    }
}

/// A protobuf scrape of nemo-lens's endpoint, decoded.
fn scrape_protobuf(port: u16) -> Vec<proto::MetricFamily> {
    use prost::Message as _;
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: \
                   application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                   encoding=delimited\r\n\r\n";
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let at = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response")
        + 4;
    let mut body = &response[at..];
    std::iter::from_fn(|| proto::MetricFamily::decode_length_delimited(&mut body).ok()).collect()
}

/// Every series of the oracle's text families, as `(sample name, labels)`
/// to value, from the decoded protobuf families.
fn protobuf_samples(
    families: &[proto::MetricFamily],
) -> std::collections::BTreeMap<(String, std::collections::BTreeMap<String, String>), f64> {
    let mut samples = std::collections::BTreeMap::new();
    for family in families.iter().filter(|f| f.name != "target_info") {
        for metric in &family.metric {
            let labels: std::collections::BTreeMap<String, String> = metric
                .label
                .iter()
                .map(|l| (l.name.clone(), l.value.clone()))
                .collect();
            let name = family.name.clone();
            if let Some(h) = &metric.histogram {
                for bucket in &h.bucket {
                    let mut labels = labels.clone();
                    labels.insert("le".into(), bucket.upper_bound.to_string());
                    samples.insert(
                        (format!("{name}_bucket"), labels),
                        bucket.cumulative_count as f64,
                    );
                }
                let mut inf = labels.clone();
                inf.insert("le".into(), "+Inf".into());
                samples.insert((format!("{name}_bucket"), inf), h.sample_count as f64);
                samples.insert((format!("{name}_sum"), labels.clone()), h.sample_sum);
                samples.insert((format!("{name}_count"), labels), h.sample_count as f64);
            } else if let Some(summary) = &metric.summary {
                for q in &summary.quantile {
                    let mut labels = labels.clone();
                    labels.insert("quantile".into(), q.quantile.to_string());
                    samples.insert((name.clone(), labels), q.value);
                }
                samples.insert((format!("{name}_sum"), labels.clone()), summary.sample_sum);
                samples.insert(
                    (format!("{name}_count"), labels),
                    summary.sample_count as f64,
                );
            } else {
                let value = metric
                    .counter
                    .as_ref()
                    .or(metric.gauge.as_ref())
                    .or(metric.untyped.as_ref())
                    .map(|v| v.value)
                    .expect("a value");
                samples.insert((name, labels), value);
            }
        }
    }
    samples
}

#[test]
fn protobuf_scrapes_carry_the_same_series() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none")]);
    let registry = prometheus_registry();
    let client = Arc::new(client_registry());
    RegistryBridge::new()
        .prometheus(registry.clone())
        .prometheus_client(Arc::clone(&client))
        .install(&telemetry)
        .unwrap();
    let decoded = scrape_protobuf(port);
    let oracle_text = prometheus_text(&registry) + &client_text(&client);
    let oracle = families(&oracle_text);
    // Types as the protobuf enum numbers them.
    for family in decoded.iter().filter(|f| f.name != "target_info") {
        let expected = match oracle[&family.name].kind.as_str() {
            "counter" => 0,
            "gauge" => 1,
            "summary" => 2,
            "untyped" => 3,
            "histogram" => 4,
            other => panic!("{other}"),
        };
        assert_eq!(family.r#type, expected, "type of {}", family.name);
        let help = oracle[&family.name].help.clone().unwrap_or_default();
        assert_eq!(family.help, help, "HELP of {}", family.name);
    }
    let mut expected = std::collections::BTreeMap::new();
    for family in oracle.values() {
        for (name, labels, value) in &family.samples {
            expected.insert((name.clone(), labels.clone()), *value);
        }
    }
    assert_eq!(protobuf_samples(&decoded), expected);
    assert_eq!(decoded.len(), 14, "13 families and target_info");
    telemetry.shutdown().unwrap();
}

/// One registry installed twice (or one family in two registries): each
/// family is exported once, the first installation's, on both formats.
#[test]
fn a_registry_installed_twice_is_exported_once() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none")]);
    let registry = prometheus_registry();
    for _ in 0..2 {
        RegistryBridge::new()
            .prometheus(registry.clone())
            .install(&telemetry)
            .unwrap();
    }
    let text = scrape(port);
    let typed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("# TYPE dynamo_frontend_requests_total "))
        .collect();
    assert_eq!(typed.len(), 1, "{text}");
    let requests: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("dynamo_frontend_requests_total{"))
        .collect();
    let mut unique = requests.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(requests.len(), unique.len(), "{text}");
    let decoded = scrape_protobuf(port);
    let families = decoded
        .iter()
        .filter(|f| f.name == "dynamo_frontend_requests_total")
        .count();
    assert_eq!(families, 1);
    let family = decoded
        .iter()
        .find(|f| f.name == "dynamo_frontend_requests_total")
        .unwrap();
    assert_eq!(family.metric.len(), requests.len());
    telemetry.shutdown().unwrap();
}

/// A bridged family with the Prometheus name of a nemo-lens instrument's
/// family: the instrument's is exported, the bridged one left out, on text
/// and protobuf alike (and over OTLP: nemo-lens-core's
/// `registry_bridge_otlp`).
#[test]
fn a_bridged_family_never_shadows_a_nemo_lens_instrument() {
    let _turn = exclusive();
    let (telemetry, port) = serving(&[("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none")]);
    telemetry
        .meter
        .u64_counter("dynamo.frontend.requests")
        .build()
        .add(
            2,
            &[nemo_lens::opentelemetry::KeyValue::new(
                "source",
                "nemo-lens",
            )],
        );
    RegistryBridge::new()
        .prometheus(prometheus_registry())
        .install(&telemetry)
        .unwrap();
    let text = scrape(port);
    let requests: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("dynamo_frontend_requests_total"))
        .collect();
    assert_eq!(requests.len(), 1, "{text}");
    assert!(requests[0].contains("source=\"nemo-lens\""), "{text}");
    assert!(requests[0].ends_with(" 2"), "{text}");
    // The registry's other families are served.
    assert!(text.contains("# TYPE dynamo_frontend_inflight_requests gauge\n"));
    let decoded = scrape_protobuf(port);
    let family = decoded
        .iter()
        .find(|f| f.name == "dynamo_frontend_requests_total")
        .unwrap();
    assert_eq!(family.metric.len(), 1);
    assert!(family.metric[0]
        .label
        .iter()
        .any(|l| l.name == "source" && l.value == "nemo-lens"));
    telemetry.shutdown().unwrap();
}
