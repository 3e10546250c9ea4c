//! Real-server test: Debian's `prometheus` scrapes the demo every second,
//! with the rules `nemo-lens rules` generates loaded, and
//!
//! - every field of every built-in set is queryable by its
//!   [`Descriptor::prometheus_names`](nemo_lens::Descriptor::prometheus_names),
//!   with this run's resource labels on every series;
//! - every expression of the generated dashboard (with `$service`, `$run_id`
//!   and `$__rate_interval` set) and of the generated rules returns at least
//!   one series, and so do the inference queries of NeMo Lens's own
//!   dashboard (`tests/data/lens-dashboard-queries.json`);
//! - every rule evaluates healthy, and the stopped-reporting alert goes
//!   pending once the demo is gone.
//!
//! Ignored by default because it needs the `prometheus` binary and the demo;
//! run it with `scripts/e2e.sh`, which installs Prometheus when missing,
//! builds the demo and sets `NEMO_LENS_DEMO_BIN`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nemo_lens::instruments::gym::unreleased::GpuMetrics;
use nemo_lens::Instruments;
use nemo_lens::SemconvOptIn;
use nemo_lens_cli::{builtin_sets_for, unreleased_sets, AlertPolicy, InstrumentSet};
use serde_json::Value;

use crate::support::servers::*;

const SERVICE: &str = "nemo-lens-demo";
const RUN_ID: &str = "e2e-run";

/// A dashboard expression as Grafana sends it with this run selected, the
/// goodput objective at its default, and every other variable (the
/// attribute filters) at "All", which is `.*`.
fn for_this_run(expr: &str) -> String {
    let expr = expr
        .replace("$__rate_interval", "30s")
        .replace("$service", SERVICE)
        .replace("$run_id", RUN_ID)
        .replace("$slo_objective", "0.99");
    let mut out = String::with_capacity(expr.len());
    let mut rest = expr.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let name = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(rest.len() - at - 1, |end| end);
        out.push_str(".*");
        rest = &rest[at + 1 + name..];
    }
    out.push_str(rest);
    out
}

/// Fields the demo does not record: the report, and the families of their
/// instruments, whose queries are excused from having data.
#[derive(Default)]
struct Missing {
    reports: BTreeSet<String>,
    families: BTreeSet<String>,
}

impl Missing {
    fn add(&mut self, family: &str, report: String) {
        self.families.insert(family.to_owned());
        self.reports.insert(report);
    }

    /// Whether an empty result of `expr` is explained by a missing field.
    fn excuses(&self, expr: &str) -> bool {
        self.families.iter().any(|f| expr.contains(f.as_str()))
    }
}

/// The demo records under both conventions' names.
const OPT_IN: &str = "gen_ai_latest_experimental/dup";

/// Runs the demo and a Prometheus scraping it with the generated rules.
struct Stack {
    demo: Reaped,
    demo_port: u16,
    prom_port: u16,
    dir: PathBuf,
    _prometheus: Prometheus,
}

fn start(sets: &[InstrumentSet]) -> Stack {
    let demo = PathBuf::from(
        std::env::var("NEMO_LENS_DEMO_BIN").expect("NEMO_LENS_DEMO_BIN: path of the built demo"),
    );
    let demo_port = free_port();
    let prom_port = free_port();
    let dir = std::env::temp_dir().join(format!("nemo-lens-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut demo = Reaped(
        Command::new(&demo)
            .args(["--seconds", "300", "--step-ms", "100"])
            .env("NEMO_LENS_ENABLED", "1")
            .env("NEMO_LENS_EXPORTER", "prometheus")
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", demo_port.to_string())
            .env("NEMO_LENS_RUN_ID", RUN_ID)
            .env("OTEL_SERVICE_NAME", SERVICE)
            .env("OTEL_SEMCONV_STABILITY_OPT_IN", OPT_IN)
            .env_remove("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo"),
    );
    // The first line names the endpoint.
    let first = first_line(&mut demo.0, Duration::from_secs(30));
    assert_eq!(
        first.trim(),
        format!("serving Prometheus metrics at http://127.0.0.1:{demo_port}/metrics")
    );

    let rules = dir.join("nemo-lens.rules.yml");
    std::fs::write(
        &rules,
        nemo_lens_cli::rules(sets, &AlertPolicy::default()).to_yaml(),
    )
    .unwrap();
    let prometheus = start_prometheus(
        &dir,
        prom_port,
        &format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: nemo-lens-demo\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{demo_port}']\n",
            rules.display()
        ),
        &[],
    );
    Stack {
        demo,
        demo_port,
        prom_port,
        dir,
        _prometheus: prometheus,
    }
}

#[test]
#[ignore = "needs the prometheus binary and the demo; run scripts/e2e.sh"]
fn prometheus_scrapes_the_demo_and_every_generated_query_has_data() {
    // The GPU gauges need an NVIDIA GPU and the nvml feature, which this
    // machine and the demo build do not have: their absence is the sampler's
    // documented behaviour, tested in tests/sampler.rs.
    // Both name sets at once: Python nemo-lens's, and the GenAI draft's;
    // and the unreleased NeMo-Gym sets, which the demo records too (a
    // dashboard asked for them with `--set gym-unreleased` has data).
    let sets: Vec<InstrumentSet> = builtin_sets_for(&SemconvOptIn::parse(OPT_IN))
        .into_iter()
        .chain(unreleased_sets())
        .filter(|set| set.descriptors != GpuMetrics::DESCRIPTORS)
        .collect();
    let mut stack = start(&sets);
    let port = stack.prom_port;

    // The first scrape takes about 6 s on this machine.
    let up = wait_for(
        port,
        "up{job=\"nemo-lens-demo\"} == 1",
        Duration::from_secs(60),
    );
    assert_eq!(
        label(&up[0], "instance"),
        format!("127.0.0.1:{}", stack.demo_port)
    );
    wait_for(port, "rl_reward_mean", Duration::from_secs(30));

    let missing = every_field_is_scraped_with_the_run_labels(port, &sets);
    demo_values_are_right(port);
    errors_sit_where_the_conventions_put_them(port);
    both_conventions_count_the_same_tokens(port);
    dashboard_queries_have_data(port, &sets, &missing);
    lens_dashboard_queries_have_data(port);
    rules_evaluate_and_have_data(port, &sets, &missing);
    assert!(
        missing.reports.is_empty(),
        "the demo does not record these fields, so their panels and rules stay empty; \
         record them in demo/src/main.rs:\n{}",
        missing
            .reports
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );

    // The demo's scrape size with the default resource labels, for the
    // README's trade-off.
    if let Some(size) = scrape_size(stack.demo_port) {
        println!("demo scrape with default resource labels: {size} bytes");
    }

    // Stopping the demo makes its series stale: the stopped-reporting alert
    // goes pending for this run.
    let _ = stack.demo.0.kill();
    let _ = stack.demo.0.wait();
    let pending = wait_for(
        port,
        &format!(
            "ALERTS{{alertname=\"NemoLensRunStoppedReporting\",nemo_run_id=\"{RUN_ID}\",service_name=\"{SERVICE}\"}}"
        ),
        Duration::from_secs(30),
    );
    assert_eq!(label(&pending[0], "alertstate"), "pending");

    let _ = std::fs::remove_dir_all(&stack.dir);
}

/// Every descriptor of every set, by its Prometheus sample names and static
/// attributes, carrying this run's resource labels. Returns the fields with
/// no series, each described for the report.
fn every_field_is_scraped_with_the_run_labels(port: u16, sets: &[InstrumentSet]) -> Missing {
    let run = format!(
        "job=\"nemo-lens-demo\",service_name=\"{SERVICE}\",nemo_run_id=\"{RUN_ID}\",\
         service_instance_id=\"{RUN_ID}-rank0\",dl_rank=\"0\""
    );
    let mut missing = Missing::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    for set in sets {
        for d in &set.descriptors {
            let names = d.prometheus_names();
            let statics: String = d
                .static_attributes
                .iter()
                .map(|(k, v)| format!(",{}=\"{v}\"", nemo_lens::prometheus_label(k)))
                .collect();
            for sample in &names.samples {
                let promql = format!("{sample}{{{run}{statics}}}");
                let left = deadline.saturating_duration_since(Instant::now());
                let result = poll(port, &promql, left);
                if result.is_empty() {
                    missing.add(
                        &names.family,
                        format!(
                            "  {}::{} ({} `{}`): no {promql}",
                            set.title, d.field, d.kind, d.name
                        ),
                    );
                    // One line per field is enough.
                    break;
                }
                // The resource labels are on every series of the sample,
                // not only on some.
                let all = poll(
                    port,
                    &format!("{sample}{{job=\"nemo-lens-demo\"{statics}}}"),
                    left,
                );
                assert_eq!(
                    all.len(),
                    result.len(),
                    "{sample}: series without the run labels"
                );
                for series in &result {
                    assert_eq!(label(series, "otel_scope_name"), "nemo.lens", "{promql}");
                }
                // Every attribute the field may carry shows up on some
                // series (the demo sets them all).
                for key in d.attribute_keys {
                    let label_name = nemo_lens::prometheus_label(key);
                    if !result.iter().any(|s| !label(s, &label_name).is_empty()) {
                        missing.add(
                            &names.family,
                            format!(
                                "  {}::{} ({} `{}`): attribute {key} never set on {sample}",
                                set.title, d.field, d.kind, d.name
                            ),
                        );
                    }
                }
            }
        }
    }
    missing
}

fn demo_values_are_right(port: u16) {
    let active = wait_for(port, "gym_servers_active", Duration::from_secs(5));
    assert_eq!(value(&active[0]), 4.0);
    let lr = wait_for(port, "rl_learning_rate", Duration::from_secs(5));
    assert_eq!(value(&lr[0]), 1e-6);
    let per_request = wait_for(
        port,
        "sum(gen_ai_client_token_usage_count{gen_ai_token_type=\"input\",gen_ai_operation_name=\"text_completion\"}) \
         - sum(gen_ai_server_request_duration_seconds_count{gen_ai_operation_name=\"text_completion\"})",
        Duration::from_secs(5),
    );
    assert_eq!(
        value(&per_request[0]),
        0.0,
        "one input-token point per request, whatever its outcome"
    );
    let target = wait_for(port, "target_info", Duration::from_secs(5));
    for (name, want) in [
        ("service_name", SERVICE),
        ("nemo_run_id", RUN_ID),
        ("service_instance_id", "e2e-run-rank0"),
        ("dl_rank", "0"),
        ("dl_world_size", "1"),
    ] {
        assert_eq!(label(&target[0], name), want, "target_info {name}");
    }
    // Request latencies are uniform in [0.05, 0.5] s over the semconv
    // buckets, so the interpolated p99 lies in the (0.32, 0.64] bucket.
    let p99 = wait_for(
        port,
        "histogram_quantile(0.99, sum by (le) (gen_ai_server_request_duration_seconds_bucket))",
        Duration::from_secs(5),
    );
    let p99 = value(&p99[0]);
    assert!(p99 > 0.32 && p99 <= 0.64, "p99 request duration {p99}");
}

/// Under `/dup` every token is counted once under each convention's names,
/// and the draft's names carry their attributes where the draft puts them.
fn both_conventions_count_the_same_tokens(port: u16) {
    for (draft, old) in [
        (
            "sum(gen_ai_client_inference_usage_input_tokens_total)",
            "sum(gen_ai_client_token_usage_sum{gen_ai_token_type=\"input\"})",
        ),
        (
            "sum(gen_ai_client_inference_usage_output_tokens_total)",
            "sum(gen_ai_client_token_usage_sum{gen_ai_token_type=\"output\"})",
        ),
        (
            "sum(gen_ai_client_inference_operation_input_tokens_count)",
            "sum(gen_ai_client_token_usage_count{gen_ai_token_type=\"input\"})",
        ),
        (
            "sum(gen_ai_client_inference_duration_seconds_count)",
            "sum(gen_ai_client_operation_duration_seconds_count)",
        ),
        (
            "sum(gen_ai_client_inference_time_per_output_chunk_seconds_count)",
            "sum(gen_ai_client_operation_time_per_output_chunk_seconds_count)",
        ),
    ] {
        let result = wait_for(port, &format!("{draft} - {old}"), Duration::from_secs(5));
        assert_eq!(value(&result[0]), 0.0, "{draft} against {old}");
    }
    for (promql, why) in [
        (
            "gen_ai_client_inference_usage_input_tokens_total{gen_ai_token_modality!=\"text\"}",
            "modality text unless set",
        ),
        (
            "{__name__=~\"gen_ai_client_inference_.*\",gen_ai_token_type!=\"\"}",
            "no gen_ai.token.type on the draft's names",
        ),
        (
            "gen_ai_client_inference_operation_input_tokens_count{gen_ai_token_modality!=\"\"}",
            "no modality on the per-call histograms",
        ),
        (
            "gen_ai_client_inference_usage_input_tokens_total{error_type!=\"\"}",
            "no error.type on the usage counters",
        ),
    ] {
        let result = query(port, promql).expect("Prometheus answers");
        assert_eq!(result, Some(Vec::new()), "{why}: {promql}");
    }
    // A failed request carries error.type on the draft's per-call token
    // histogram as on its duration.
    wait_for(
        port,
        "gen_ai_client_inference_operation_input_tokens_count{error_type=\"timeout\"}",
        Duration::from_secs(30),
    );
}

/// `error.type` on the durations of failed, timed-out and dropped work only,
/// never on TTFT/TPOT or token usage; one TTFT and one TPOT per successful
/// request (every one streams enough tokens).
fn errors_sit_where_the_conventions_put_them(port: u16) {
    for (series, error_type) in [
        ("gen_ai_server_request_duration_seconds_count", "timeout"),
        ("gen_ai_server_request_duration_seconds_count", "_OTHER"),
        (
            "gen_ai_client_operation_duration_seconds_count",
            "rate_limited",
        ),
    ] {
        wait_for(
            port,
            &format!("{series}{{error_type=\"{error_type}\"}}"),
            Duration::from_secs(30),
        );
    }
    for series in [
        "gen_ai_server_time_to_first_token_seconds_count",
        "gen_ai_server_time_per_output_token_seconds_count",
        "gen_ai_client_token_usage_count",
        "gen_ai_client_operation_time_to_first_chunk_seconds_count",
        "gen_ai_client_operation_time_per_output_chunk_seconds_count",
    ] {
        let promql = format!("{series}{{error_type!=\"\"}}");
        let result = query(port, &promql).expect("Prometheus answers");
        assert_eq!(result, Some(Vec::new()), "{promql}");
    }
    for (difference, what) in [
        (
            "sum(gen_ai_server_time_to_first_token_seconds_count) \
             - sum(gen_ai_server_request_duration_seconds_count{error_type=\"\",gen_ai_operation_name=\"text_completion\"})",
            "one TTFT per successful streamed request (not the embeddings)",
        ),
        (
            "sum(gen_ai_server_time_per_output_token_seconds_count) \
             - sum(gen_ai_server_time_to_first_token_seconds_count)",
            "one TPOT per TTFT",
        ),
    ] {
        let result = wait_for(port, difference, Duration::from_secs(5));
        assert_eq!(value(&result[0]), 0.0, "{what}");
    }
}

/// Every target of the generated dashboard, and every variable query, with
/// this run selected. Targets of fields the demo does not record are left
/// to the `missing` report.
fn dashboard_queries_have_data(port: u16, sets: &[InstrumentSet], missing: &Missing) {
    let dashboard = nemo_lens_cli::dashboard(sets);
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut checked, mut total) = (0, 0);
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            total += 1;
            let expr = for_this_run(target["expr"].as_str().unwrap());
            let result = poll(
                port,
                &expr,
                deadline.saturating_duration_since(Instant::now()),
            );
            if result.is_empty() && missing.excuses(&expr) {
                continue;
            }
            assert!(
                !result.is_empty(),
                "panel {}: no series for {expr}",
                panel["title"]
            );
            for series in &result {
                assert!(
                    value(series).is_finite(),
                    "panel {}: {expr} = {series}",
                    panel["title"]
                );
                assert_eq!(label(series, "service_name"), SERVICE, "{expr}");
            }
            checked += 1;
        }
    }
    // Only targets of fields the demo does not record are left out.
    assert!(
        checked > 0 && (checked == total || !missing.reports.is_empty()),
        "{checked} of {total} targets"
    );
    println!("dashboard: {checked} of {total} targets have data for this run");
    // label_values(selector, label) is what Grafana runs for a variable.
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        let Some(definition) = variable["definition"].as_str() else {
            continue;
        };
        let inner = definition
            .strip_prefix("label_values(")
            .and_then(|d| d.strip_suffix(')'))
            .unwrap_or_else(|| panic!("unexpected variable query {definition}"));
        let (selector, name) = inner.rsplit_once(", ").unwrap();
        let promql = format!("count by ({name}) ({})", for_this_run(selector));
        let values: Vec<String> = wait_for(port, &promql, Duration::from_secs(5))
            .iter()
            .map(|s| label(s, name).to_owned())
            .collect();
        let want = if name == "service_name" {
            SERVICE
        } else {
            RUN_ID
        };
        assert!(values.iter().any(|v| v == want), "{definition}: {values:?}");
    }
}

/// NeMo Lens's own inference panels, with this run selected.
fn lens_dashboard_queries_have_data(port: u16) {
    let path = format!(
        "{}/tests/data/lens-dashboard-queries.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let lens: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for panel in lens["panels"].as_array().unwrap() {
        for expr in panel["exprs"].as_array().unwrap() {
            let expr = for_this_run(expr.as_str().unwrap());
            let result = wait_for(port, &expr, Duration::from_secs(30));
            for series in &result {
                assert_eq!(label(series, "service_name"), SERVICE, "{expr}");
                assert!(value(series).is_finite(), "{expr}: {series}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 3);
}

/// Every rule is loaded and evaluates without error; every recording rule's
/// series and every alert's measure exist for this run.
fn rules_evaluate_and_have_data(port: u16, sets: &[InstrumentSet], missing: &Missing) {
    let generated = nemo_lens_cli::rules(sets, &AlertPolicy::default());
    let expected = generated.recording.len() + generated.alerts.len();
    let deadline = Instant::now() + Duration::from_secs(30);
    let rules = loop {
        let rules: Vec<Value> = get_json(port, "/api/v1/rules")
            .map(|json| {
                json["data"]["groups"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        let evaluated = rules
            .iter()
            .filter(|r| {
                !r["lastEvaluation"]
                    .as_str()
                    .unwrap_or("0001")
                    .starts_with("0001")
            })
            .count();
        if rules.len() == expected && evaluated == expected {
            break rules;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {expected} rules evaluated",
            evaluated
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    for rule in &rules {
        assert_eq!(rule["health"], "ok", "{rule}");
    }

    let run = format!("service_name=\"{SERVICE}\",nemo_run_id=\"{RUN_ID}\"");
    for r in &generated.recording {
        let recorded = poll(
            port,
            &format!("{}{{{run}}}", r.record),
            Duration::from_secs(if missing.excuses(&r.record) { 2 } else { 30 }),
        );
        if recorded.is_empty() && missing.excuses(&r.record) {
            continue;
        }
        assert!(
            !recorded.is_empty(),
            "recording rule {}: no series for this run",
            r.record
        );
        assert!(
            recorded.iter().all(|s| value(s).is_finite()),
            "{}: {recorded:?}",
            r.record
        );
        wait_for(port, &r.expr, Duration::from_secs(5));
    }
    for alert in &generated.alerts {
        // The measure has data while the alert is quiet; the subquery of the
        // stopped-reporting measure needs a minute boundary after the first
        // scrape.
        let measure = poll(port, &alert.measure, Duration::from_secs(75));
        if measure.is_empty() && missing.excuses(&alert.measure) {
            continue;
        }
        let ours = measure
            .iter()
            .find(|s| label(s, "nemo_run_id") == RUN_ID && label(s, "service_name") == SERVICE)
            .unwrap_or_else(|| panic!("{}: no series for this run in {measure:?}", alert.alert));
        assert!(value(ours).is_finite(), "{}: {ours}", alert.alert);
        let firing = query(
            port,
            &format!("ALERTS{{alertname=\"{}\",{run}}}", alert.alert),
        )
        .unwrap()
        .unwrap_or_default();
        assert!(
            firing.is_empty(),
            "{} is active on a healthy run: {firing:?}",
            alert.alert
        );
    }
}

fn scrape_size(port: u16) -> Option<usize> {
    http_get(port, "/metrics").map(|body| body.len())
}
