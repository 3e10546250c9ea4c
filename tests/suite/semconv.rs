//! `OTEL_SEMCONV_STABILITY_OPT_IN` through `setup_telemetry`: for each
//! setting, exactly which GenAI instruments are exported, with which
//! attributes and values.
//!
//! Setup holds process-wide state, so every test holds `SERIAL`.

use crate::support::{exclusive, Exclusive};

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::{latest_points, AttrValue, Point, Value};
use nemo_lens::instruments::{InferenceRequest, ModelCall};
use nemo_lens::opentelemetry_sdk::metrics::InMemoryMetricExporter;
use nemo_lens::{EnvLookup, NemoLensConfig, SemconvOptIn, SetupOptions, TelemetryHandle};

fn serial() -> Exclusive {
    exclusive()
}

/// Telemetry set up from the environment `OTEL_SEMCONV_STABILITY_OPT_IN`
/// (unset when `None`), exporting into memory.
fn setup(opt_in: Option<&str>) -> (TelemetryHandle, InMemoryMetricExporter) {
    let mut env = vec![("NEMO_LENS_ENABLED", "1")];
    env.extend(opt_in.map(|v| ("OTEL_SEMCONV_STABILITY_OPT_IN", v)));
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(env)).unwrap();
    let exporter = InMemoryMetricExporter::default();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .push_exporter(exporter.clone())
        .setup(&config, 0, 1)
        .unwrap();
    (handle, exporter)
}

/// One streamed server request, one streamed client call and one failed
/// client call, at explicit instants.
fn record(handle: &TelemetryHandle) {
    let meter = &handle.meter;
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);

    let mut request = InferenceRequest::start_at(meter, t0)
        .model("llama")
        .input_tokens(100)
        .cache_read_input_tokens(40);
    request.first_token_at(ms(20));
    request.add_output_tokens(5);
    request.finish_at(ms(60));

    let mut call = ModelCall::start_at(meter, t0)
        .model("policy")
        .input_tokens(900)
        .output_tokens(64)
        .reasoning_output_tokens(16);
    for n in [10, 30, 100] {
        call.chunk_at(ms(n));
    }
    call.finish_at(ms(120));

    let failed = ModelCall::start_at(meter, t0)
        .model("policy-b")
        .input_tokens(50);
    failed.fail_at("timeout", ms(50));
}

/// Name, attributes and value of every exported point, in a form that
/// compares exactly: a sum's value, or a histogram's count and sum in ms.
type Row = (String, BTreeMap<String, String>, String);

fn rows(handle: &TelemetryHandle, exporter: &InMemoryMetricExporter) -> Vec<Row> {
    handle.force_flush().unwrap();
    let mut rows: Vec<Row> = latest_points(exporter).iter().map(row).collect();
    rows.sort();
    rows
}

fn row(point: &Point) -> Row {
    let attributes = point
        .attributes
        .iter()
        .map(|(k, v)| {
            let v = match v {
                AttrValue::String(s) => s.to_string(),
                other => format!("{other:?}"),
            };
            (k.clone(), v)
        })
        .collect();
    let value = match &point.value {
        Value::Number(n) => format!("{} {n}", point.kind),
        Value::Histogram { count, sum, .. } => {
            format!("Histogram count={count} sum={}", (sum * 1000.0).round())
        }
    };
    (point.name.clone(), attributes, value)
}

/// An expected point: name, attributes and value as [`row`] writes them.
type Expect = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    &'static str,
);

const SERVER: &[(&str, &str)] = &[
    ("gen_ai.operation.name", "text_completion"),
    ("gen_ai.provider.name", "nemo"),
    ("gen_ai.request.model", "llama"),
];
const CLIENT: &[(&str, &str)] = &[
    ("gen_ai.operation.name", "chat"),
    ("gen_ai.provider.name", "nemo"),
    ("gen_ai.request.model", "policy"),
];
const FAILED: &[(&str, &str)] = &[
    ("gen_ai.operation.name", "chat"),
    ("gen_ai.provider.name", "nemo"),
    ("gen_ai.request.model", "policy-b"),
];

fn with<'a>(base: &[(&'a str, &'a str)], extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    base.iter().chain(extra).copied().collect()
}

/// What every setting exports alike: the server's timings.
fn server_timings() -> Vec<Expect> {
    vec![
        (
            "gen_ai.server.request.duration",
            SERVER.to_vec(),
            "Histogram count=1 sum=60",
        ),
        (
            "gen_ai.server.time_to_first_token",
            SERVER.to_vec(),
            "Histogram count=1 sum=20",
        ),
        (
            "gen_ai.server.time_per_output_token",
            SERVER.to_vec(),
            "Histogram count=1 sum=10",
        ),
    ]
}

/// Python nemo-lens's names (semantic conventions v1.41.1).
fn default_rows() -> Vec<Expect> {
    let usage = "gen_ai.client.token.usage";
    vec![
        (
            usage,
            with(SERVER, &[("gen_ai.token.type", "input")]),
            "Histogram count=1 sum=100000",
        ),
        (
            usage,
            with(SERVER, &[("gen_ai.token.type", "output")]),
            "Histogram count=1 sum=5000",
        ),
        (
            usage,
            with(CLIENT, &[("gen_ai.token.type", "input")]),
            "Histogram count=1 sum=900000",
        ),
        (
            usage,
            with(CLIENT, &[("gen_ai.token.type", "output")]),
            "Histogram count=1 sum=64000",
        ),
        (
            usage,
            with(FAILED, &[("gen_ai.token.type", "input")]),
            "Histogram count=1 sum=50000",
        ),
        (
            "gen_ai.client.operation.duration",
            CLIENT.to_vec(),
            "Histogram count=1 sum=120",
        ),
        (
            "gen_ai.client.operation.duration",
            with(FAILED, &[("error.type", "timeout")]),
            "Histogram count=1 sum=50",
        ),
        (
            "gen_ai.client.operation.time_to_first_chunk",
            CLIENT.to_vec(),
            "Histogram count=1 sum=10",
        ),
        // Two gaps, 20 ms and 70 ms.
        (
            "gen_ai.client.operation.time_per_output_chunk",
            CLIENT.to_vec(),
            "Histogram count=2 sum=90",
        ),
    ]
}

/// The draft's names (semantic-conventions-genai).
fn latest_rows() -> Vec<Expect> {
    let text = [("gen_ai.token.modality", "text")];
    let timeout = [("error.type", "timeout")];
    vec![
        (
            "gen_ai.client.inference.usage.input_tokens",
            with(SERVER, &text),
            "Sum 100",
        ),
        (
            "gen_ai.client.inference.usage.input_tokens",
            with(CLIENT, &text),
            "Sum 900",
        ),
        (
            "gen_ai.client.inference.usage.input_tokens",
            with(FAILED, &text),
            "Sum 50",
        ),
        (
            "gen_ai.client.inference.usage.output_tokens",
            with(SERVER, &text),
            "Sum 5",
        ),
        (
            "gen_ai.client.inference.usage.output_tokens",
            with(CLIENT, &text),
            "Sum 64",
        ),
        (
            "gen_ai.client.inference.usage.cache_read.input_tokens",
            with(SERVER, &text),
            "Sum 40",
        ),
        (
            "gen_ai.client.inference.usage.reasoning.output_tokens",
            with(CLIENT, &text),
            "Sum 16",
        ),
        (
            "gen_ai.client.inference.operation.input_tokens",
            SERVER.to_vec(),
            "Histogram count=1 sum=100000",
        ),
        (
            "gen_ai.client.inference.operation.input_tokens",
            CLIENT.to_vec(),
            "Histogram count=1 sum=900000",
        ),
        (
            "gen_ai.client.inference.operation.input_tokens",
            with(FAILED, &timeout),
            "Histogram count=1 sum=50000",
        ),
        (
            "gen_ai.client.inference.operation.output_tokens",
            SERVER.to_vec(),
            "Histogram count=1 sum=5000",
        ),
        (
            "gen_ai.client.inference.operation.output_tokens",
            CLIENT.to_vec(),
            "Histogram count=1 sum=64000",
        ),
        (
            "gen_ai.client.inference.duration",
            CLIENT.to_vec(),
            "Histogram count=1 sum=120",
        ),
        (
            "gen_ai.client.inference.duration",
            with(FAILED, &timeout),
            "Histogram count=1 sum=50",
        ),
        (
            "gen_ai.client.inference.time_to_first_chunk",
            CLIENT.to_vec(),
            "Histogram count=1 sum=10",
        ),
        (
            "gen_ai.client.inference.time_per_output_chunk",
            CLIENT.to_vec(),
            "Histogram count=2 sum=90",
        ),
    ]
}

fn as_expected(groups: Vec<Vec<Expect>>) -> Vec<Row> {
    let mut rows: Vec<Row> = groups
        .into_iter()
        .flatten()
        .map(|(name, attributes, value)| {
            let attributes = attributes
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            (name.to_owned(), attributes, value.to_owned())
        })
        .collect();
    rows.sort();
    rows
}

fn exported(opt_in: Option<&str>) -> Vec<Row> {
    let (handle, exporter) = setup(opt_in);
    record(&handle);
    let rows = rows(&handle, &exporter);
    handle.shutdown().unwrap();
    rows
}

#[test]
fn unset_exports_python_nemo_lens_names_exactly() {
    let _serial = serial();
    assert_eq!(
        exported(None),
        as_expected(vec![server_timings(), default_rows()])
    );
}

#[test]
fn other_libraries_values_change_nothing() {
    let _serial = serial();
    assert_eq!(
        exported(Some("http/dup,database")),
        as_expected(vec![server_timings(), default_rows()])
    );
}

#[test]
fn gen_ai_latest_experimental_exports_the_drafts_names_only() {
    let _serial = serial();
    let rows = exported(Some("http, gen_ai_latest_experimental"));
    assert_eq!(rows, as_expected(vec![server_timings(), latest_rows()]));
    assert!(
        rows.iter()
            .all(|(_, attributes, _)| !attributes.contains_key("gen_ai.token.type")),
        "no gen_ai.token.type anywhere"
    );
}

#[test]
fn dup_exports_both_for_migrating_dashboards() {
    let _serial = serial();
    assert_eq!(
        exported(Some("gen_ai_latest_experimental/dup")),
        as_expected(vec![server_timings(), default_rows(), latest_rows()])
    );
}

#[test]
fn the_option_wins_over_the_environment() {
    let _serial = serial();
    let mut env = vec![("NEMO_LENS_ENABLED", "1")];
    env.push((
        "OTEL_SEMCONV_STABILITY_OPT_IN",
        "gen_ai_latest_experimental",
    ));
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(env)).unwrap();
    let exporter = InMemoryMetricExporter::default();
    let handle = SetupOptions::new()
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .semconv_opt_in(SemconvOptIn::none())
        .push_exporter(exporter.clone())
        .setup(&config, 0, 1)
        .unwrap();
    assert!(handle.meter.semconv_opt_in().is_empty());
    record(&handle);
    assert_eq!(
        rows(&handle, &exporter),
        as_expected(vec![server_timings(), default_rows()])
    );
    handle.shutdown().unwrap();
}

/// The draft's names as the reference lists them: each is declared, gated
/// on `gen_ai_latest_experimental`, with its kind, unit and buckets.
#[test]
fn the_drafts_names_match_the_reference() {
    use nemo_lens::instruments::{InferenceMetrics, ModelCallMetrics};
    use nemo_lens::{Descriptor, Instruments, SemconvGate};

    let reference: serde_json::Value =
        serde_json::from_str(include_str!("../data/genai-semconv-metrics.json")).unwrap();
    let declared: Vec<&Descriptor> = InferenceMetrics::DESCRIPTORS
        .iter()
        .chain(ModelCallMetrics::DESCRIPTORS)
        .collect();
    let mut checked = 0;
    for metric in reference["latest_experimental"]["metrics"]
        .as_array()
        .unwrap()
    {
        let listed = metric["name"].as_str().unwrap();
        // "gen_ai.client.inference.time_to_first_chunk / time_per_output_chunk"
        let names: Vec<String> = match listed.split_once(" / ") {
            Some((first, second)) => {
                let prefix = &first[..first.rfind('.').unwrap() + 1];
                vec![first.to_owned(), format!("{prefix}{second}")]
            }
            None => vec![listed.to_owned()],
        };
        for name in names {
            let matching: Vec<_> = declared.iter().filter(|d| d.name == name).collect();
            assert!(!matching.is_empty(), "{name} is declared");
            for d in matching {
                assert_eq!(
                    d.semconv,
                    SemconvGate::OptIn("gen_ai_latest_experimental"),
                    "{name}"
                );
                assert_eq!(d.kind.as_str(), metric["kind"].as_str().unwrap(), "{name}");
                assert_eq!(d.unit, metric["unit"].as_str().unwrap(), "{name}");
                if let Some(buckets) = metric["buckets"].as_array() {
                    let buckets: Vec<f64> = buckets.iter().map(|b| b.as_f64().unwrap()).collect();
                    assert_eq!(d.buckets, Some(buckets.as_slice()), "{name}");
                }
                let modality = d.attribute_keys.contains(&"gen_ai.token.modality");
                assert_eq!(
                    modality,
                    name.contains(".usage."),
                    "{name}: modality on the counters only"
                );
                checked += 1;
            }
        }
    }
    // Nine names, the seven token metrics in both sets.
    assert_eq!(checked, 7 * 2 + 3);
}

/// The draft's `fetch_response` (a stored response fetched by id, no
/// inference) "SHOULD NOT report token usage": under the opt-in a call of
/// that operation records its duration and no token metric, whatever
/// tokens were set; without the opt-in, which has no such operation,
/// nothing changes.
#[test]
fn a_fetched_response_reports_no_tokens_under_the_draft() {
    let _serial = serial();
    let fetched = |opt_in: Option<&str>| {
        let (handle, exporter) = setup(opt_in);
        let t0 = Instant::now();
        ModelCall::start_at(&handle.meter, t0)
            .model("policy")
            .operation_name(nemo_lens::instruments::FETCH_RESPONSE)
            .input_tokens(900)
            .output_tokens(64)
            .finish_at(t0 + Duration::from_millis(40));
        InferenceRequest::start_at(&handle.meter, t0)
            .model("llama")
            .operation_name(nemo_lens::instruments::FETCH_RESPONSE)
            .input_tokens(100)
            .output_tokens(5)
            .finish_at(t0 + Duration::from_millis(30));
        let rows = rows(&handle, &exporter);
        handle.shutdown().unwrap();
        rows.into_iter()
            .map(|(name, attributes, value)| {
                assert_eq!(
                    attributes.get("gen_ai.operation.name").map(String::as_str),
                    Some("fetch_response"),
                    "{name}"
                );
                (name, value)
            })
            .collect::<Vec<_>>()
    };
    let names = |rows: &[(String, String)]| -> Vec<String> {
        rows.iter().map(|(name, _)| name.clone()).collect()
    };
    let latest = fetched(Some("gen_ai_latest_experimental"));
    assert_eq!(
        latest,
        [
            (
                "gen_ai.client.inference.duration".to_owned(),
                "Histogram count=1 sum=40".to_owned()
            ),
            (
                "gen_ai.server.request.duration".to_owned(),
                "Histogram count=1 sum=30".to_owned()
            ),
        ],
        "{latest:#?}"
    );
    let default = fetched(None);
    assert!(
        names(&default).contains(&"gen_ai.client.token.usage".to_owned()),
        "the default output is unchanged: {default:#?}"
    );
}
