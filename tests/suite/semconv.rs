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
fn record(meter: &nemo_lens::Meter) {
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

/// What the draft asks beyond names, with `gen_ai_latest_experimental`
/// alone (`/dup` records the same measurements under both names): the
/// failed call, which had a prompt but no response, records its output
/// tokens as 0 on both output metrics, `error.type` on the histogram. Its
/// usage was partly known, so the modality stays `text` and no cache or
/// reasoning 0 is claimed.
fn latest_only_rows() -> Vec<Expect> {
    vec![
        (
            "gen_ai.client.inference.usage.output_tokens",
            with(FAILED, &[("gen_ai.token.modality", "text")]),
            "Sum 0",
        ),
        (
            "gen_ai.client.inference.operation.output_tokens",
            with(FAILED, &[("error.type", "timeout")]),
            "Histogram count=1 sum=0",
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
    exported_by(opt_in, record)
}

/// Rows of what `record` records on telemetry set up with `opt_in`.
fn exported_by(opt_in: Option<&str>, record: impl FnOnce(&nemo_lens::Meter)) -> Vec<Row> {
    let (handle, exporter) = setup(opt_in);
    record(&handle.meter);
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
    assert_eq!(
        rows,
        as_expected(vec![server_timings(), latest_rows(), latest_only_rows()])
    );
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
    record(&handle.meter);
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
    // Eleven names: the seven token metrics and the embeddings' input
    // tokens in both sets, the client's three durations and its embeddings
    // duration.
    assert_eq!(checked, 8 * 2 + 3 + 1);
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

/// The draft moved embeddings to `gen_ai.client.embeddings.duration` and
/// `gen_ai.client.embeddings.operation.input_tokens` ("Embeddings operations
/// are no longer reported on gen_ai.client.operation.duration ... token usage
/// ... is now reported on gen_ai.client.embeddings.operation.input_tokens"):
/// under the opt-in an embeddings call, ok or failed, and a server's
/// embeddings request record there and on no inference metric; the
/// duration carries `error.type`, the token histogram does not. The
/// default output is the stable one, as before.
#[test]
fn embeddings_record_on_their_own_metrics_under_the_draft() {
    let _serial = serial();
    let embed = |meter: &nemo_lens::Meter| {
        let t0 = Instant::now();
        ModelCall::start_at(meter, t0)
            .model("e5")
            .operation_name(nemo_lens::instruments::EMBEDDINGS)
            .input_tokens(12)
            .finish_at(t0 + Duration::from_millis(40));
        ModelCall::start_at(meter, t0)
            .model("e5-b")
            .operation_name("embeddings")
            .input_tokens(3)
            .fail_at("timeout", t0 + Duration::from_millis(90));
        InferenceRequest::start_at(meter, t0)
            .model("e5")
            .operation_name("embeddings")
            .input_tokens(7)
            .finish_at(t0 + Duration::from_millis(30));
    };
    let e5 = [
        ("gen_ai.operation.name", "embeddings"),
        ("gen_ai.provider.name", "nemo"),
        ("gen_ai.request.model", "e5"),
    ];
    let e5b = [
        ("gen_ai.operation.name", "embeddings"),
        ("gen_ai.provider.name", "nemo"),
        ("gen_ai.request.model", "e5-b"),
    ];
    let latest = exported_by(Some("gen_ai_latest_experimental"), embed);
    assert_eq!(
        latest,
        as_expected(vec![vec![
            (
                "gen_ai.client.embeddings.duration",
                e5.to_vec(),
                "Histogram count=1 sum=40"
            ),
            (
                "gen_ai.client.embeddings.duration",
                with(&e5b, &[("error.type", "timeout")]),
                "Histogram count=1 sum=90"
            ),
            // The client's 12 and the server's 7 on one series, as the
            // inference token metrics are shared.
            (
                "gen_ai.client.embeddings.operation.input_tokens",
                e5.to_vec(),
                "Histogram count=2 sum=19000"
            ),
            (
                "gen_ai.client.embeddings.operation.input_tokens",
                e5b.to_vec(),
                "Histogram count=1 sum=3000"
            ),
            (
                "gen_ai.server.request.duration",
                e5.to_vec(),
                "Histogram count=1 sum=30"
            ),
        ]]),
        "{latest:#?}"
    );
    // With /dup one field feeds both names: the embeddings are copied to
    // their own metrics and stay on the others, whose numbers are unchanged.
    let dup = exported_by(Some("gen_ai_latest_experimental/dup"), embed);
    let mut dup_names: Vec<&str> = dup.iter().map(|(name, _, _)| name.as_str()).collect();
    dup_names.dedup();
    assert_eq!(
        dup_names,
        [
            "gen_ai.client.embeddings.duration",
            "gen_ai.client.embeddings.operation.input_tokens",
            "gen_ai.client.inference.duration",
            "gen_ai.client.inference.operation.input_tokens",
            "gen_ai.client.inference.usage.input_tokens",
            "gen_ai.client.operation.duration",
            "gen_ai.client.token.usage",
            "gen_ai.server.request.duration",
        ],
        "{dup:#?}"
    );
    let stable = |rows: &[Row]| -> Vec<Row> {
        rows.iter()
            .filter(|(name, _, _)| {
                name == "gen_ai.client.operation.duration" || name == "gen_ai.client.token.usage"
            })
            .cloned()
            .collect()
    };
    let default = exported_by(None, embed);
    assert_eq!(stable(&dup), stable(&default), "the stable names' numbers");
    let names: Vec<&str> = default.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gen_ai.client.operation.duration",
            "gen_ai.client.operation.duration",
            "gen_ai.client.token.usage",
            "gen_ai.client.token.usage",
            "gen_ai.server.request.duration",
        ],
        "the stable names, as before: {default:#?}"
    );
}

/// PR #536 (the later of the two fragments on failed calls): token metrics
/// "for every inference operation, including failed ones, with `error.type`
/// on the histograms and `0` when no usage was received", that 0 "with
/// `gen_ai.token.modality` set to `unknown`". A call that failed before any
/// usage records 0 on both histograms and all five counters; a server
/// request that failed mid-stream records the tokens it streamed.
#[test]
fn failed_calls_record_their_tokens_or_zero_under_the_draft() {
    let _serial = serial();
    let fail = |meter: &nemo_lens::Meter| {
        let t0 = Instant::now();
        ModelCall::start_at(meter, t0)
            .model("policy")
            .fail_at("503", t0 + Duration::from_millis(10));
        let mut request = InferenceRequest::start_at(meter, t0)
            .model("llama")
            .input_tokens(20);
        request.first_token_at(t0 + Duration::from_millis(5));
        request.add_output_tokens(3);
        request.fail_at("cancelled", t0 + Duration::from_millis(25));
    };
    let latest = exported_by(Some("gen_ai_latest_experimental"), fail);
    let mut token_rows: Vec<Row> = latest
        .into_iter()
        .filter(|(name, _, _)| name.contains("_tokens"))
        .map(|(name, mut attributes, value)| {
            attributes.remove("gen_ai.provider.name");
            attributes.remove("gen_ai.operation.name");
            (name, attributes, value)
        })
        .collect();
    token_rows.sort();
    let policy = [("gen_ai.request.model", "policy")];
    let unknown = [
        ("gen_ai.request.model", "policy"),
        ("gen_ai.token.modality", "unknown"),
    ];
    let llama_text = [
        ("gen_ai.request.model", "llama"),
        ("gen_ai.token.modality", "text"),
    ];
    let usage = |kind: &'static str| -> &'static str {
        match kind {
            "input" => "gen_ai.client.inference.usage.input_tokens",
            "output" => "gen_ai.client.inference.usage.output_tokens",
            "cache_read" => "gen_ai.client.inference.usage.cache_read.input_tokens",
            "cache_write" => "gen_ai.client.inference.usage.cache_write.input_tokens",
            _ => "gen_ai.client.inference.usage.reasoning.output_tokens",
        }
    };
    let mut expected = vec![
        (
            "gen_ai.client.inference.operation.input_tokens",
            with(&policy, &[("error.type", "503")]),
            "Histogram count=1 sum=0",
        ),
        (
            "gen_ai.client.inference.operation.output_tokens",
            with(&policy, &[("error.type", "503")]),
            "Histogram count=1 sum=0",
        ),
        (
            "gen_ai.client.inference.operation.input_tokens",
            vec![
                ("error.type", "cancelled"),
                ("gen_ai.request.model", "llama"),
            ],
            "Histogram count=1 sum=20000",
        ),
        (
            "gen_ai.client.inference.operation.output_tokens",
            vec![
                ("error.type", "cancelled"),
                ("gen_ai.request.model", "llama"),
            ],
            "Histogram count=1 sum=3000",
        ),
        (usage("input"), llama_text.to_vec(), "Sum 20"),
        (usage("output"), llama_text.to_vec(), "Sum 3"),
    ];
    for kind in ["input", "output", "cache_read", "cache_write", "reasoning"] {
        expected.push((usage(kind), unknown.to_vec(), "Sum 0"));
    }
    assert_eq!(token_rows, as_expected(vec![expected]), "{token_rows:#?}");

    // The default output records no token for either: the stable
    // conventions have no rule for failed calls, and the server set never
    // counted a failed request's output.
    let default = exported_by(None, fail);
    let tokens: Vec<_> = default
        .iter()
        .filter(|(name, _, _)| name == "gen_ai.client.token.usage")
        .map(|(_, attributes, value)| (attributes["gen_ai.token.type"].clone(), value.clone()))
        .collect();
    assert_eq!(
        tokens,
        [("input".to_owned(), "Histogram count=1 sum=20000".to_owned())]
    );
}
