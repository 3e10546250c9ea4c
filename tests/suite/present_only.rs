//! Record only what is present: a series exists, on the test capture and on
//! a scrape of the Prometheus endpoint, only once a record has carried its
//! value. Every field of every built-in set is recorded alone, and the
//! capture must then hold that field's instruments and no other; the
//! parity tests record every field and so could not see a series that
//! should not exist.

use crate::support::{exclusive, Exclusive};

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use nemo_lens::instruments::gym::unreleased::{
    GpuMetrics, HttpMetrics, ModelServerCallMetrics, ProcessCpuMetrics, QueueMetrics,
    RolloutMetrics,
};
use nemo_lens::instruments::gym::{
    ConnectionPoolConnects, ConnectionPoolQueue, GymMetrics, HostMemoryMetrics, SandboxExec,
    SandboxHeld, SandboxMetrics, SandboxStartup, ServerMemoryMetrics,
};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::serving::SchedulingMetrics;
use nemo_lens::instruments::{InferenceMetrics, InferenceRequest, ModelCall, ModelCallMetrics};
use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};
use nemo_lens::testing::Capture;
use nemo_lens::{Guarded, Instruments, Meter, SemconvOptIn};

/// A value of each field type the sets use.
trait Sample {
    fn sample() -> Self;
}

impl Sample for f64 {
    fn sample() -> Self {
        0.5
    }
}

impl Sample for u64 {
    fn sample() -> Self {
        3
    }
}

impl Sample for i64 {
    fn sample() -> Self {
        2
    }
}

impl Sample for Duration {
    fn sample() -> Self {
        Duration::from_micros(1500)
    }
}

impl Sample for Vec<f64> {
    fn sample() -> Self {
        vec![0.01, 0.02]
    }
}

/// Sets one field of a set to its sample value.
type Setter<T> = (&'static str, fn(&mut T));

/// The setters of the named fields of `$set`.
macro_rules! fields {
    ($set:ty: $($field:ident),+ $(,)?) => {
        vec![$((
            stringify!($field),
            (|set: &mut $set| set.$field = Some(Sample::sample())) as fn(&mut $set),
        )),+]
    };
}

/// The instruments `field` feeds on a meter with `opt_in`, sorted.
fn fed_by<T: Instruments>(field: &str, opt_in: &SemconvOptIn) -> Vec<String> {
    let names: BTreeSet<String> = T::DESCRIPTORS
        .iter()
        .filter(|d| d.field == field && d.semconv.is_open(opt_in))
        .map(|d| d.name.to_owned())
        .collect();
    names.into_iter().collect()
}

/// Records each field of `T` alone (on a set `prepare` gave its attributes)
/// on a capture of its own, with and without the GenAI draft's opt-in, and
/// checks that exactly the instruments of that field were exported (none
/// where the opt-in gates them all off); sets without attributes must also
/// carry none. The setters must cover every recorded field of the set.
fn each_field_alone<T: Instruments + Default>(prepare: fn(&mut T), fields: Vec<Setter<T>>) {
    let set_name = std::any::type_name::<T>();
    let covered: BTreeSet<&str> = fields.iter().map(|(field, _)| *field).collect();
    let declared: BTreeSet<&str> = T::DESCRIPTORS.iter().map(|d| d.field).collect();
    assert_eq!(covered, declared, "{set_name}: every recorded field, once");
    let without_attributes = T::DESCRIPTORS.iter().all(|d| d.attributes.is_empty());
    let opt_ins = [
        SemconvOptIn::none(),
        SemconvOptIn::parse("gen_ai_latest_experimental"),
    ];
    for (field, set_field) in fields {
        let mut fed_somewhere = false;
        for opt_in in &opt_ins {
            let capture = Capture::new();
            let meter = capture.meter().with_semconv_opt_in(opt_in.clone());
            let mut set = T::default();
            prepare(&mut set);
            set_field(&mut set);
            set.record(&meter);
            let expected = fed_by::<T>(field, opt_in);
            fed_somewhere |= !expected.is_empty();
            assert_eq!(
                capture.names(),
                expected,
                "{set_name}.{field} alone, opt-in {opt_in:?}"
            );
            if without_attributes {
                for name in &expected {
                    assert_eq!(
                        capture.attribute_sets(name),
                        [Vec::<(String, String)>::new()],
                        "{set_name}.{field}: {name}"
                    );
                }
            }
        }
        assert!(fed_somewhere, "{set_name}.{field} feeds nothing");
    }
}

#[test]
fn rl_fields_alone() {
    each_field_alone::<RlMetrics>(
        |_| {},
        fields!(RlMetrics: reward_mean, kl_divergence, policy_loss, value_loss, entropy,
            response_length_mean, grad_norm, learning_rate, throughput_tokens_per_sec,
            generation_duration_ms, rollout_duration_ms),
    );
}

#[test]
fn the_issue_program_exports_the_reward_alone() {
    let capture = Capture::new();
    RlMetrics::default()
        .reward_mean(0.5)
        .record(capture.meter());
    assert_eq!(capture.names(), ["rl.reward.mean"]);
    assert_eq!(capture.last_value("rl.reward.mean", &[]), Some(0.5));
    assert_eq!(capture.last_value("rl.kl_divergence", &[]), None);
    let exposition = capture.exposition();
    let samples: Vec<&str> = exposition.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        samples,
        ["rl_reward_mean{otel_scope_name=\"nemo.lens\"} 0.5"],
        "{exposition}"
    );
}

#[test]
fn gym_fields_alone() {
    each_field_alone::<GymMetrics>(
        |_| {},
        fields!(GymMetrics: server_request_duration_ms, rollout_duration_ms, verify_duration_ms,
            verify_success_rate, active_servers),
    );
}

#[test]
fn inference_fields_alone() {
    each_field_alone::<InferenceMetrics>(
        |set| set.base.model = Some("m".into()),
        fields!(InferenceMetrics: request_duration_s, input_tokens, output_tokens,
            cache_read_input_tokens, cache_write_input_tokens, reasoning_output_tokens,
            embeddings_input_tokens, time_to_first_token_s, time_per_output_token_s),
    );
}

#[test]
fn model_call_fields_alone() {
    each_field_alone::<ModelCallMetrics>(
        |set| set.base.model = Some("m".into()),
        fields!(ModelCallMetrics: operation_duration_s, input_tokens, output_tokens,
            cache_read_input_tokens, cache_write_input_tokens, reasoning_output_tokens,
            embeddings_input_tokens, time_to_first_chunk_s, time_per_output_chunk_s,
            embeddings_duration_s),
    );
}

#[test]
fn scheduling_fields_alone() {
    each_field_alone::<SchedulingMetrics>(
        |_| {},
        fields!(SchedulingMetrics: requests_waiting, requests_running, kv_cache_usage, queue_s,
            prefill_s, decode_s, finished, prefix_cache_queries, prefix_cache_hits,
            kv_cache_block_size, kv_cache_blocks),
    );
}

#[test]
fn gym_release_fields_alone() {
    each_field_alone::<SandboxMetrics>(
        |set| set.provider = Some("docker".into()),
        fields!(SandboxMetrics: active, startup_ms, exec_ms, create_retries),
    );
    each_field_alone::<SandboxStartup>(
        |set| set.provider = Some("docker".into()),
        fields!(SandboxStartup: duration),
    );
    each_field_alone::<SandboxExec>(
        |set| set.provider = Some("docker".into()),
        fields!(SandboxExec: duration),
    );
    each_field_alone::<SandboxHeld>(
        |set| set.provider = Some("docker".into()),
        fields!(SandboxHeld: active),
    );
    each_field_alone::<ConnectionPoolQueue>(
        |set| set.destination = Some("policy_model".into()),
        fields!(ConnectionPoolQueue: duration),
    );
    each_field_alone::<ConnectionPoolConnects>(
        |set| set.destination = Some("policy_model".into()),
        fields!(ConnectionPoolConnects: connects),
    );
    each_field_alone::<ServerMemoryMetrics>(
        |set| set.server_name = Some("env".into()),
        fields!(ServerMemoryMetrics: usage, sampled_peak, processes),
    );
    each_field_alone::<HostMemoryMetrics>(
        |_| {},
        fields!(HostMemoryMetrics: usage, available, total, sampled_peak),
    );
}

#[test]
fn gym_unreleased_fields_alone() {
    each_field_alone::<QueueMetrics>(|_| {}, fields!(QueueMetrics: wait_ms));
    each_field_alone::<RolloutMetrics>(|_| {}, fields!(RolloutMetrics: completed));
    each_field_alone::<ModelServerCallMetrics>(
        |_| {},
        fields!(ModelServerCallMetrics: duration_ms, time_to_first_byte_ms),
    );
    each_field_alone::<HttpMetrics>(|_| {}, fields!(HttpMetrics: timeouts, retries));
    each_field_alone::<ProcessCpuMetrics>(|_| {}, fields!(ProcessCpuMetrics: cpu_percent));
    each_field_alone::<GpuMetrics>(
        |_| {},
        fields!(GpuMetrics: utilization_percent, memory_used_mib, memory_total_mib),
    );
}

/// A set of a user's own, without attributes, one field of each kind.
#[derive(Instruments, Default)]
struct Trainer {
    /// Loss of the step.
    #[gauge("app.loss")]
    loss: Option<f64>,
    /// Steps taken.
    #[counter("app.steps", unit = "{step}")]
    steps: Option<u64>,
    /// Batches queued.
    #[up_down_counter("app.queued", unit = "{batch}")]
    queued: Option<i64>,
    /// Time of a step.
    #[histogram("app.step.duration", unit = "s")]
    step_s: Option<f64>,
    /// Time of a checkpoint.
    #[histogram("app.checkpoint.duration", unit = "s")]
    checkpoint: Option<Duration>,
}

#[test]
fn a_derived_set_without_attributes_exports_only_what_it_recorded() {
    each_field_alone::<Trainer>(
        |_| {},
        fields!(Trainer: loss, steps, queued, step_s, checkpoint),
    );
    // Recorded at 0 is recorded: a zero is a value, an absent field is not.
    let capture = Capture::new();
    Trainer {
        steps: Some(0),
        queued: Some(0),
        ..Default::default()
    }
    .record(capture.meter());
    assert_eq!(capture.names(), ["app.queued", "app.steps"]);
    assert_eq!(capture.sum("app.steps", &[]), Some(0.0));
    assert_eq!(capture.sum("app.queued", &[]), Some(0.0));
    // And a gauge recorded at 0 is 0, not absent.
    Trainer {
        loss: Some(0.0),
        ..Default::default()
    }
    .record(capture.meter());
    assert_eq!(capture.last_value("app.loss", &[]), Some(0.0));
}

#[test]
fn guards_export_only_what_they_record() {
    let capture = Capture::new();
    SandboxStartup::default()
        .provider("docker")
        .start(capture.meter())
        .finish();
    assert_eq!(capture.names(), ["gym.sandbox.startup_duration_ms"]);

    let capture = Capture::new();
    SandboxExec::default()
        .provider("docker")
        .start(capture.meter())
        .finish();
    assert_eq!(capture.names(), ["gym.sandbox.exec_duration_ms"]);

    let capture = Capture::new();
    let held = SandboxHeld::default()
        .provider("docker")
        .start(capture.meter());
    assert_eq!(capture.names(), ["gym.sandbox.active"]);
    assert_eq!(
        capture.sum(
            "gym.sandbox.active",
            &[("nemo.gym.sandbox.provider", "docker")]
        ),
        Some(1.0)
    );
    drop(held);
    assert_eq!(capture.sum("gym.sandbox.active", &[]), Some(0.0));

    let capture = Capture::new();
    ConnectionPoolQueue::default()
        .destination("policy_model")
        .start(capture.meter())
        .finish();
    assert_eq!(
        capture.names(),
        ["gym.http.connection_pool.queue_duration_ms"]
    );

    // A failed create, as NeMo-Gym 0.7.0 records it: nothing.
    let capture = Capture::new();
    SandboxStartup::default()
        .provider("docker")
        .start(capture.meter())
        .discard();
    assert_eq!(capture.names(), Vec::<String>::new());
    // A discarded hold still gives its count back.
    let capture = Capture::new();
    SandboxHeld::default()
        .provider("docker")
        .start(capture.meter())
        .discard();
    assert_eq!(capture.sum("gym.sandbox.active", &[]), Some(0.0));
    // A duration measured elsewhere and set on the guard is kept.
    let capture = Capture::new();
    let mut queued = ConnectionPoolQueue::default()
        .destination("policy_model")
        .start(capture.meter());
    queued.set_duration(Duration::from_millis(250));
    queued.finish();
    assert_eq!(
        capture.sum("gym.http.connection_pool.queue_duration_ms", &[]),
        Some(250.0)
    );

    let capture = Capture::new();
    InferenceRequest::start(capture.meter()).finish();
    assert_eq!(capture.names(), ["gen_ai.server.request.duration"]);

    let capture = Capture::new();
    ModelCall::start(capture.meter()).finish();
    assert_eq!(capture.names(), ["gen_ai.client.operation.duration"]);
}

#[test]
fn an_observed_set_exports_what_its_source_reports() {
    let capture = Capture::new();
    let observation =
        ConnectionPoolConnects::observe(capture.meter(), Vec::<ConnectionPoolConnects>::new)
            .unwrap();
    assert_eq!(capture.names(), Vec::<String>::new());
    drop(observation);
    let observation = ConnectionPoolConnects::observe(capture.meter(), || {
        [ConnectionPoolConnects::default()
            .destination("policy_model")
            .connects(4)]
    })
    .unwrap();
    assert_eq!(capture.names(), ["gym.http.connection_pool.connect_total"]);
    drop(observation);
}

/// Sends a GET of /metrics and returns the body.
fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.contains(" 200 "), "{response}");
    body.to_owned()
}

/// The families of a text exposition that have samples, `target_info`
/// aside.
fn families(body: &str) -> BTreeSet<String> {
    let typed: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .filter(|name| *name != "target_info")
        .collect();
    typed
        .into_iter()
        .filter(|family| {
            body.lines()
                .any(|l| !l.starts_with('#') && l.starts_with(family))
        })
        .map(str::to_owned)
        .collect()
}

/// Telemetry exporting to a Prometheus endpoint on 127.0.0.1, and the
/// lock that keeps it the only one.
fn prometheus_telemetry() -> (TelemetryHandle, Exclusive) {
    let serial = exclusive();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
    ]))
    .unwrap();
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    (telemetry, serial)
}

/// The README's first program, one step of it: the scrape has the two
/// gauges it records and nothing else of the set.
#[test]
fn the_readme_first_program_exports_exactly_what_it_records() {
    let (telemetry, _serial) = prometheus_telemetry();
    let step = 0;
    RlMetrics::default()
        .reward_mean(0.5 + f64::from(step) / 1200.0)
        .policy_loss(0.3)
        .record(&telemetry.meter);
    let body = scrape(telemetry.prometheus_addr().unwrap());
    assert_eq!(
        families(&body),
        BTreeSet::from(["rl_policy_loss".to_owned(), "rl_reward_mean".to_owned()]),
        "{body}"
    );
    let samples: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("rl_"))
        .map(|l| l.rsplit_once(' ').unwrap().1)
        .collect();
    assert_eq!(samples, ["0.3", "0.5"], "{body}");
    telemetry.shutdown().unwrap();
}

/// On one endpoint per set: after each field is recorded, the scrape holds
/// the families of the fields recorded so far, and no other.
fn each_field_on_the_endpoint<T: Instruments + Default>(
    prepare: fn(&mut T),
    fields: Vec<Setter<T>>,
) {
    let (telemetry, _serial) = prometheus_telemetry();
    let addr = telemetry.prometheus_addr().unwrap();
    let meter: &Meter = &telemetry.meter;
    // Building the set binds its instruments: still nothing to export.
    let mut empty = T::default();
    prepare(&mut empty);
    empty.record(meter);
    assert_eq!(families(&scrape(addr)), BTreeSet::new());
    let mut expected = BTreeSet::new();
    for (field, set_field) in fields {
        let mut set = T::default();
        prepare(&mut set);
        set_field(&mut set);
        set.record(meter);
        expected.extend(
            T::DESCRIPTORS
                .iter()
                .filter(|d| d.field == field && d.semconv.is_open(meter.semconv_opt_in()))
                .map(|d| d.prometheus_names().family),
        );
        let body = scrape(addr);
        assert_eq!(families(&body), expected, "after {field}:\n{body}");
    }
    telemetry.shutdown().unwrap();
}

#[test]
fn the_endpoint_shows_each_series_from_its_first_record() {
    each_field_on_the_endpoint::<RlMetrics>(
        |_| {},
        fields!(RlMetrics: reward_mean, kl_divergence, policy_loss, value_loss, entropy,
            response_length_mean, grad_norm, learning_rate, throughput_tokens_per_sec,
            generation_duration_ms, rollout_duration_ms),
    );
    each_field_on_the_endpoint::<GymMetrics>(
        |_| {},
        fields!(GymMetrics: verify_duration_ms, verify_success_rate, active_servers,
            server_request_duration_ms, rollout_duration_ms),
    );
    each_field_on_the_endpoint::<SchedulingMetrics>(
        |_| {},
        fields!(SchedulingMetrics: kv_cache_usage, requests_waiting, requests_running,
            finished, queue_s),
    );
    each_field_on_the_endpoint::<SandboxMetrics>(
        |set| set.provider = Some("docker".into()),
        fields!(SandboxMetrics: exec_ms, active, create_retries, startup_ms),
    );
    each_field_on_the_endpoint::<Trainer>(
        |_| {},
        fields!(Trainer: step_s, loss, queued, steps, checkpoint),
    );
}
