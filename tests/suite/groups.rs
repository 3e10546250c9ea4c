//! Runtime metric groups end to end: spec files registered and recorded by
//! key into the SDK's in-memory exporter (values and attributes asserted),
//! refused specs naming every key and rule, spec file errors naming the
//! file, undeclared attributes left off, observable groups, and
//! re-registration.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nemo_lens::groups::{
    create_metric_instruments, record_metrics, register_metric_group,
    register_metric_group_with_override, MetricKind, MetricSpec, Rule, SpecFile, SpecFileError,
};
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::Meter;

/// Attributes as sorted `(key, value)` strings.
type Attributes = Vec<(String, String)>;

/// Exported points by instrument name.
type Points = BTreeMap<String, Vec<(Attributes, f64)>>;

struct Harness {
    provider: SdkMeterProvider,
    exporter: InMemoryMetricExporter,
    meter: Meter,
}

impl Harness {
    fn new() -> Self {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let meter = Meter::new(provider.meter("nemo.lens"));
        Harness {
            provider,
            exporter,
            meter,
        }
    }

    /// Every exported point of the last collection: name → [(attributes,
    /// value or histogram sum)].
    fn points(&self) -> Points {
        self.exporter.reset();
        self.provider.force_flush().unwrap();
        let batches = self.exporter.get_finished_metrics().unwrap();
        let mut points = BTreeMap::new();
        for metric in batches
            .last()
            .unwrap()
            .scope_metrics()
            .flat_map(|s| s.metrics())
        {
            let entry: &mut Vec<_> = points.entry(metric.name().to_owned()).or_default();
            let attrs = |it: &mut dyn Iterator<Item = &KeyValue>| -> Attributes {
                let mut v: Vec<_> = it
                    .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect();
                v.sort();
                v
            };
            match metric.data() {
                AggregatedMetrics::F64(MetricData::Gauge(g)) => {
                    for p in g.data_points() {
                        entry.push((attrs(&mut p.attributes()), p.value()));
                    }
                }
                AggregatedMetrics::F64(MetricData::Sum(s)) => {
                    for p in s.data_points() {
                        entry.push((attrs(&mut p.attributes()), p.value()));
                    }
                }
                AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                    for p in h.data_points() {
                        entry.push((attrs(&mut p.attributes()), p.sum()));
                    }
                }
                other => panic!("unexpected data {other:?}"),
            }
        }
        for series in points.values_mut() {
            series.sort_by(|a, b| a.0.cmp(&b.0));
        }
        points
    }
}

fn spec_path(name: &str) -> String {
    format!("{}/examples/specs/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn pairs(list: &[(&str, &str)]) -> Attributes {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn nemo_rl_spec_file_registers_and_records_by_key() {
    let file = SpecFile::load(spec_path("nemo_rl.json")).unwrap();
    assert_eq!(file.groups.len(), 1);
    assert_eq!(file.groups[0].1.len(), 24);
    file.register().unwrap();

    let h = Harness::new();
    record_metrics(
        &h.meter,
        "rl",
        [
            ("reward_mean", Some(0.5)),
            ("policy_loss", None),
            ("vllm_prompt_tokens", Some(100.0)),
        ],
        &[],
    );
    record_metrics(&h.meter, "rl", [("vllm_prompt_tokens", 28.0)], &[]);
    record_metrics(
        &h.meter,
        "rl",
        [("setup_duration", 12.5)],
        &[KeyValue::new("rl.setup.phase", "generation_init")],
    );
    // `pid` is not among the attributes the spec declares: left off, and the
    // value recorded without it.
    record_metrics(
        &h.meter,
        "rl",
        [("host_memory_used", 6.4e10)],
        &[
            KeyValue::new("host.name", "dgx-0"),
            KeyValue::new("rl.worker_groups", "policy"),
            KeyValue::new("pid", 42),
        ],
    );
    let points = h.points();
    assert_eq!(points["rl.reward.mean"], [(vec![], 0.5)]);
    assert!(!points.contains_key("rl.policy.loss"), "None is skipped");
    assert_eq!(points["rl.vllm.prompt_tokens"], [(vec![], 128.0)]);
    assert_eq!(
        points["rl.setup.duration"],
        [(pairs(&[("rl.setup.phase", "generation_init")]), 12.5)]
    );
    assert_eq!(
        points["rl.host.memory.used"],
        [(
            pairs(&[("host.name", "dgx-0"), ("rl.worker_groups", "policy")]),
            6.4e10
        )]
    );
    assert_eq!(h.meter.cached_groups(), 1);
}

#[test]
fn nemo_rl_rows_as_declared_are_refused_naming_each_key_and_rule() {
    let path = spec_path("nemo_rl_as_declared.json");
    let error = SpecFile::load(&path).unwrap_err();
    let SpecFileError::Specs { errors, .. } = &error else {
        panic!("the rows as NeMo-RL declares them break the rules: {error}");
    };
    assert_eq!(
        errors[0].keys_and_rules(),
        [
            ("efficiency_seconds", Rule::DurationOnGauge),
            ("efficiency_seconds", Rule::UnitInName),
            ("efficiency_pct", Rule::UnitInName),
            ("setup_duration", Rule::DurationOnGauge),
            ("sft_v2_step_duration", Rule::DurationOnGauge),
            ("sft_v2_valid_tokens_per_second", Rule::UnitInName),
        ]
    );
    let text = error.to_string();
    assert!(
        text.starts_with(&format!(
            "spec file {path}: metric group `rl` refused, 6 problems:"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "key `setup_duration` [duration-on-gauge] a gauge with duration unit `s`: durations \
             belong on a histogram, a gauge loses the p99; make it \"kind\": \"histogram\""
        ),
        "{text}"
    );
}

#[test]
fn malformed_spec_files_name_the_field() {
    let text = r#"{"groups": {"g": [
        {"key": "a", "name": "app.a", "kind": "gauge", "unit": 5, "description": "A."},
        {"key": "b", "name": "app.b", "kind": "summary", "colour": "red", "description": "B."},
        {"key": "c", "name": "app.c", "kind": "observable_gauge", "description": "C."},
        {"key": "d", "name": "app.d", "kind": null, "unit": "s", "description": "D."}
    ], "h": [{"key": "only", "name": "app.only", "kind": "histogramm", "description": "O."}]}}"#;
    let Err(SpecFileError::Specs { errors, .. }) = SpecFile::from_json(text) else {
        panic!("refused");
    };
    // Parsing problems first, then the rules; a kind that is not a string
    // is one problem, not a duration-on-gauge too; a group whose only spec is
    // refused is not also "empty".
    assert_eq!(
        errors[0].keys_and_rules(),
        [
            ("a", Rule::Field),
            ("b", Rule::Field),
            ("b", Rule::Kind),
            ("d", Rule::Field),
            ("c", Rule::Callback),
        ]
    );
    assert_eq!(errors[1].group, "h");
    assert_eq!(errors[1].keys_and_rules(), [("only", Rule::Kind)]);
    assert!(matches!(
        SpecFile::from_json("{"),
        Err(SpecFileError::Json { path: None, .. })
    ));
    let not_a_spec_file = SpecFile::from_json("{}").unwrap_err();
    assert!(matches!(not_a_spec_file, SpecFileError::Shape { .. }));
    assert!(
        not_a_spec_file
            .to_string()
            .starts_with("not a spec file: a spec file is an object with \"groups\""),
        "{not_a_spec_file}"
    );
}

#[test]
fn spec_file_errors_name_the_file_and_print_their_sentence_from_main() {
    // What `fn main() -> Result<..>` prints is `Debug`: the sentence, then
    // its cause, never a struct.
    let missing = format!("{}/no_such_spec.json", env!("CARGO_TARGET_TMPDIR"));
    let error = SpecFile::load(&missing).unwrap_err();
    assert!(matches!(error, SpecFileError::Read { .. }));
    assert_eq!(
        error.to_string(),
        format!("cannot read spec file {missing}")
    );
    let cause = error.source().expect("the OS error is the source");
    assert_eq!(format!("{error:?}"), format!("{error}: {cause}"));
    assert!(
        format!("{error:?}").contains("no_such_spec.json: No such file or directory"),
        "{error:?}"
    );

    let truncated = format!("{}/truncated_spec.json", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&truncated, "{\"groups\": {\n").unwrap();
    let error = SpecFile::load(&truncated).unwrap_err();
    assert_eq!(error.path(), Some(std::path::Path::new(&truncated)));
    assert_eq!(
        error.to_string(),
        format!("spec file {truncated} is not valid JSON at line 2, column 0")
    );
    assert_eq!(
        format!("{error:?}"),
        format!(
            "spec file {truncated} is not valid JSON at line 2, column 0: EOF while parsing an \
             object at line 2 column 0"
        )
    );

    let shapeless = format!("{}/shapeless_spec.json", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&shapeless, "[]").unwrap();
    let error = SpecFile::load(&shapeless).unwrap_err();
    assert!(error.source().is_none());
    assert_eq!(
        format!("{error:?}"),
        format!(
            "{shapeless} is not a spec file: a spec file is an object with \"groups\": \
             {{\"GROUP\": [specs]}}"
        )
    );

    // Refused groups: no cause, so `Debug` is `Display` exactly.
    let error = SpecFile::load(spec_path("nemo_rl_as_declared.json")).unwrap_err();
    assert!(error.source().is_none());
    assert_eq!(format!("{error:?}"), error.to_string());
    let SpecFileError::Specs { errors, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(format!("{:?}", errors[0]), errors[0].to_string());
}

#[test]
fn a_spec_without_a_description_is_refused_naming_it() {
    let text = r#"{"groups": {"app": [
        {"key": "loss", "name": "app.loss", "kind": "gauge"},
        {"key": "lr", "name": "app.learning_rate", "kind": "gauge", "description": ""},
        {"key": "steps", "name": "app.steps", "kind": "counter", "description": "Steps taken."}
    ]}}"#;
    let Err(SpecFileError::Specs { errors, .. }) = SpecFile::from_json(text) else {
        panic!("refused");
    };
    assert_eq!(
        errors[0].keys_and_rules(),
        [("loss", Rule::Description), ("lr", Rule::Description)]
    );
    let text = errors[0].to_string();
    assert!(
        text.contains(
            "key `loss` [description] `app.loss` has no description: add one saying what it \
             measures (\"description\" in a spec file, MetricSpec::description in code); it is \
             exported with the metric"
        ),
        "{text}"
    );
    assert!(
        text.contains("key `lr` [description] `app.learning_rate` has no description"),
        "{text}"
    );
    // In code too, as the derive refuses a field without a doc comment.
    let error = register_metric_group(
        "undescribed",
        [MetricSpec::new(
            "loss",
            "undescribed.loss",
            MetricKind::Gauge,
        )],
    )
    .unwrap_err();
    assert_eq!(error.keys_and_rules(), [("loss", Rule::Description)]);
}

#[test]
fn a_unit_outside_ucum_is_refused_with_its_ucum_spelling() {
    let text = r#"{"groups": {"app": [
        {"key": "size", "name": "app.request.size", "kind": "histogram", "unit": "bytes",
         "description": "Size of one request body."},
        {"key": "rate", "name": "app.generation.rate", "kind": "gauge", "unit": "tokens/s",
         "description": "Tokens generated per second."},
        {"key": "read", "name": "app.read", "kind": "counter", "unit": "By",
         "description": "Bytes read."}
    ]}}"#;
    let Err(SpecFileError::Specs { errors, .. }) = SpecFile::from_json(text) else {
        panic!("refused");
    };
    assert_eq!(
        errors[0].keys_and_rules(),
        [("size", Rule::Unit), ("rate", Rule::Unit)]
    );
    let text = errors[0].to_string();
    assert!(
        text.contains("key `size` [unit] unit `bytes` is not UCUM; write `By`"),
        "{text}"
    );
    assert!(
        text.contains(
            "key `rate` [unit] unit `tokens/s` is not UCUM; write `{token}/s` (UCUM puts what is \
             counted in braces)"
        ),
        "{text}"
    );
}

#[test]
fn undeclared_attributes_are_left_off_and_the_value_recorded() {
    register_metric_group(
        "gym_env",
        [
            MetricSpec::new(
                "step_duration",
                "gym_env.step.duration",
                MetricKind::Histogram,
            )
            .unit("s")
            .description("Duration of one environment step.")
            .attributes(["gym.env.name"]),
            MetricSpec::new("episodes", "gym_env.episodes", MetricKind::Counter)
                .unit("{episode}")
                .description("Episodes finished.")
                .static_attribute("gym.server", "a"),
        ],
    )
    .unwrap();
    let h = Harness::new();
    for (oops, seconds) in [("x", 0.5), ("y", 1.5)] {
        record_metrics(
            &h.meter,
            "gym_env",
            [("step_duration", seconds), ("episodes", 1.0)],
            &[
                KeyValue::new("gym.env.name", "math"),
                KeyValue::new("oops", oops),
            ],
        );
    }
    let points = h.points();
    // One series per declared attribute value: `oops` never made one.
    assert_eq!(
        points["gym_env.step.duration"],
        [(pairs(&[("gym.env.name", "math")]), 2.0)]
    );
    // A spec declaring no attribute takes none: one series (with its static
    // attribute), every value in it.
    assert_eq!(
        points["gym_env.episodes"],
        [(pairs(&[("gym.server", "a")]), 2.0)]
    );
}

#[test]
fn a_group_is_registered_once_unless_replaced() {
    let specs = || [MetricSpec::new("a", "once.a", MetricKind::Gauge).description("A.")];
    register_metric_group("once", specs()).unwrap();
    let error = register_metric_group("once", specs()).unwrap_err();
    assert_eq!(error.keys_and_rules(), [("", Rule::AlreadyRegistered)]);

    let h = Harness::new();
    record_metrics(&h.meter, "once", [("a", 1.0)], &[]);
    register_metric_group_with_override(
        "once",
        [MetricSpec::new("b", "once.b", MetricKind::Counter).description("B.")],
    )
    .unwrap();
    // The meter rebuilds for the new definition: `b` records, `a` is gone.
    record_metrics(&h.meter, "once", [("a", 2.0), ("b", 3.0)], &[]);
    let points = h.points();
    assert_eq!(
        points["once.a"],
        [(vec![], 1.0)],
        "the old gauge keeps its last value"
    );
    assert_eq!(points["once.b"], [(vec![], 3.0)]);
}

#[test]
fn observable_groups_report_what_their_callback_sees() {
    let hosts: Arc<Mutex<Vec<(&'static str, f64)>>> =
        Arc::new(Mutex::new(vec![("dgx-0", 1.0e9), ("dgx-1", 2.0e9)]));
    let calls = Arc::new(AtomicUsize::new(0));
    let (seen, counted) = (Arc::clone(&hosts), Arc::clone(&calls));
    register_metric_group(
        "observed",
        [
            MetricSpec::new("used", "observed.memory.used", MetricKind::ObservableGauge)
                .unit("By")
                .description("Memory in use on one host.")
                .attributes(["host.name"])
                .static_attribute("rl.worker_groups", "policy")
                .callback(move |observer| {
                    counted.fetch_add(1, Ordering::Relaxed);
                    for (host, used) in seen.lock().unwrap().iter() {
                        // `pid` is undeclared: left off, as for recorded
                        // values.
                        observer.observe(
                            *used,
                            &[KeyValue::new("host.name", *host), KeyValue::new("pid", 7)],
                        );
                    }
                }),
        ],
    )
    .unwrap();
    let h = Harness::new();
    // Twice: the callback is installed once per meter.
    create_metric_instruments(&h.meter, "observed");
    create_metric_instruments(&h.meter, "observed");
    let points = h.points();
    assert_eq!(
        points["observed.memory.used"],
        [
            (
                pairs(&[("host.name", "dgx-0"), ("rl.worker_groups", "policy")]),
                1.0e9
            ),
            (
                pairs(&[("host.name", "dgx-1"), ("rl.worker_groups", "policy")]),
                2.0e9
            ),
        ]
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    // A host the callback stops reporting ends.
    hosts.lock().unwrap().remove(0);
    let points = h.points();
    assert_eq!(
        points["observed.memory.used"],
        [(
            pairs(&[("host.name", "dgx-1"), ("rl.worker_groups", "policy")]),
            2.0e9
        )]
    );
}
