//! A simulated RL training job: a trainer step loop that calls an inference
//! server and a pool of gym servers, recording every built-in set for a
//! bounded time. Inference requests go through `InferenceRequest` (streamed,
//! with a few timing out and a few cancelled by their client) and the
//! engine's scheduler through `ScheduledRequest`, and each gym server's call
//! to the policy through `ModelCall`.
//!
//! By default it serves Prometheus metrics on `http://127.0.0.1:9464/metrics`
//! and prints that URL; every nemo-lens and OpenTelemetry variable still
//! applies (for example `NEMO_LENS_EXPORTER=otlp` or
//! `OTEL_EXPORTER_PROMETHEUS_PORT=9500`).
//!
//! ```text
//! cargo run --release -p nemo-lens-demo -- --seconds 60
//! ```
//!
//! Options: `--seconds N` (default 120) bounds the run, `--step-ms N`
//! (default 200) is the simulated step time. The rank and world size come
//! from the launcher (torchrun's `RANK` and `WORLD_SIZE`, Slurm's
//! `SLURM_PROCID` and `SLURM_NTASKS`, Open MPI's, PMI's: see
//! `nemo_lens::telemetry::JobRank`), else 0 of 1.

use std::error::Error;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use nemo_lens::instruments::gym::unreleased::{
    HttpMetrics, ModelServerCallMetrics, ProcessSampler, QueueMetrics, RetryReason, RolloutMetrics,
    RolloutOutcome,
};
use nemo_lens::instruments::gym::{
    ConnectionPoolConnects, ConnectionPoolQueue, GymMetrics, GymServer, MemoryProfiler,
    QueueConstraint, QueueOutcome, SandboxHeld, SandboxHeldGuard, SandboxMetrics,
};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
use nemo_lens::instruments::{InferenceRequest, ModelCall};
use nemo_lens::opentelemetry::trace::{TraceContextExt as _, Tracer as _, TracerProvider as _};
use nemo_lens::opentelemetry::Context;
use nemo_lens::{EnvLookup, Guarded, Instruments, JobRank, Meter, NemoLensConfig, SetupOptions};
use opentelemetry_sdk::trace::SdkTracerProvider;

/// Gym servers in the simulated pool.
const GYM_SERVERS: u64 = 4;
/// Inference requests per training step.
const REQUESTS_PER_STEP: usize = 16;
/// Hard cap on steps, whatever the time bound says.
const MAX_STEPS: u64 = 1_000_000;

struct Args {
    seconds: u64,
    step_ms: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 120,
        step_ms: 200,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name} expects a whole number, got {v:?}"))
        };
        match flag.as_str() {
            "--seconds" => args.seconds = value("--seconds")?,
            "--step-ms" => args.step_ms = value("--step-ms")?,
            "-h" | "--help" => {
                println!("usage: demo [--seconds N] [--step-ms N]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}; try --help")),
        }
    }
    Ok(args)
}

/// The process environment, with the demo's defaults where it is silent:
/// telemetry on, exported to Prometheus.
fn demo_env() -> EnvLookup {
    // Defaults only for unset variables: `CUDA_VISIBLE_DEVICES=""` keeps
    // meaning "no GPUs".
    EnvLookup::process().with_defaults([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_SERVICE_NAME", "nemo-lens-demo"),
        // Latency objectives, so that goodput is counted: a few requests
        // miss each.
        (
            "NEMO_LENS_SLO",
            "time_to_first_token:60 request_latency:450",
        ),
    ])
}

/// A small deterministic generator, so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next_f64()
    }
}

/// One rollout on gym server `server`: it waits for a concurrency slot,
/// sometimes starts a sandbox (with a retry now and then), calls the policy
/// (streamed, through `ModelCall`, plus NeMo-Gym's own model-call timings),
/// retries a dropped connection, and verifies. Returns whether verification
/// passed and the rollout's duration in ms.
/// What the simulated gym servers hold across steps: a sandbox each, and
/// the connection attempts of their HTTP pool.
struct GymState {
    sandboxes: Vec<Option<SandboxHeldGuard>>,
    connects: Arc<AtomicU64>,
}

/// NeMo-Gym 0.7.0's sandbox and connection-pool instruments for one server
/// and step: a sandbox re-provisioned every ten steps (held in between), a
/// command run in it, and a queued connection acquisition now and then.
fn gym_server_resources(
    meter: &Meter,
    rng: &mut Rng,
    state: &mut GymState,
    server: u64,
    step: u64,
) {
    let held = &mut state.sandboxes[server as usize];
    if step % 10 == server || held.is_none() {
        // Released (-1) before the next is held (+1).
        *held = None;
        let mut sandbox = SandboxMetrics::default()
            .provider("docker")
            .startup_ms(rng.uniform(300.0, 1500.0));
        if rng.next_f64() < 0.2 {
            sandbox = sandbox.create_retries(1);
        }
        sandbox.record(meter);
        *held = Some(SandboxHeld::default().provider("docker").start(meter));
    }
    SandboxMetrics::default()
        .provider("docker")
        .exec_ms(rng.uniform(200.0, 4000.0))
        .record(meter);

    state.connects.fetch_add(1, Ordering::Relaxed);
    if rng.next_f64() < 0.3 {
        let (constraint, outcome) = if rng.next_f64() < 0.9 {
            (QueueConstraint::PerHost, QueueOutcome::Ok)
        } else {
            (QueueConstraint::Total, QueueOutcome::Abandoned)
        };
        ConnectionPoolQueue::default()
            .duration(Duration::from_secs_f64(rng.uniform(0.00002, 0.2)))
            .constraint(constraint)
            .outcome(outcome)
            .destination("policy_model")
            .record(meter);
    }
}

fn gym_server_rollout(meter: &Meter, rng: &mut Rng, server: u64, step: u64) -> (bool, f64) {
    let site = if server.is_multiple_of(2) {
        "rollout_driver"
    } else {
        "judge"
    };
    QueueMetrics::default()
        .site(site)
        .wait_ms(rng.uniform(0.1, 25.0))
        .record(meter);

    // The gym server asks the policy for an action, streamed in chunks.
    let sent = Instant::now();
    let mut call = ModelCall::start_at(meter, sent)
        .model("policy")
        .response_model("policy-v2")
        .server_address("127.0.0.1")
        .server_port(8000);
    let chunks = rng.uniform(4.0, 32.0) as u64;
    let first_chunk_s = rng.uniform(0.02, 0.2);
    let mut arrived = first_chunk_s;
    for _ in 0..chunks {
        call.chunk_at(sent + Duration::from_secs_f64(arrived));
        // Chunks 10 to 30 ms apart, with a stall now and then: the
        // per-chunk histogram shows it, a per-call mean would not.
        let stall = if rng.next_f64() < 0.02 { 0.5 } else { 0.0 };
        arrived += rng.uniform(0.01, 0.03) + stall;
    }
    let call_s = arrived;
    let input = rng.uniform(256.0, 2048.0) as u64;
    let call = call
        .input_tokens(input)
        .cache_read_input_tokens(input / 2)
        .cache_write_input_tokens(input / 8)
        .reasoning_output_tokens(chunks);
    if rng.next_f64() < 0.02 {
        // The provider bills what it streamed before the limit hit.
        call.output_tokens(chunks)
            .fail_at("rate_limited", sent + Duration::from_secs_f64(call_s));
        HttpMetrics::default()
            .retry_reason(RetryReason::ServerDisconnected)
            .retries(1)
            .record(meter);
    } else {
        call.output_tokens(chunks * 4)
            .finish_at(sent + Duration::from_secs_f64(call_s));
    }
    // The gym server embeds its observation for retrieval: under the GenAI
    // draft (`gen_ai_latest_experimental`) an embeddings call has metrics of
    // its own.
    let embedded = Instant::now();
    let embedding = ModelCall::start_at(meter, embedded)
        .model("e5-large")
        .response_model("e5-large-v2")
        .operation_name(nemo_lens::instruments::EMBEDDINGS)
        .server_address("127.0.0.1")
        .server_port(8001)
        .input_tokens(input / 4);
    let took = embedded + Duration::from_secs_f64(rng.uniform(0.005, 0.05));
    // 1 % fail, under the 5 % error-ratio alert of `nemo-lens rules`.
    if rng.next_f64() < 0.01 {
        embedding.fail_at("timeout", took);
    } else {
        embedding.finish_at(took);
    }
    ModelServerCallMetrics::default()
        .dialect("openai_chat")
        .server_name("policy")
        .time_to_first_byte_ms(first_chunk_s * 1000.0)
        .duration_ms(call_s * 1000.0)
        .record(meter);
    if rng.next_f64() < 0.02 {
        HttpMetrics::default()
            .internal(true)
            .timeouts(1)
            .record(meter);
    }

    let verify_ok = rng.next_f64() < 0.6 + 0.3 * (step as f64 / (step as f64 + 50.0));
    let failed = rng.next_f64() < 0.03;
    let outcome = if failed {
        RolloutOutcome::Failure
    } else {
        RolloutOutcome::Success
    };
    RolloutMetrics::default()
        .outcome(outcome)
        .completed(1)
        .record(meter);
    let rollout_ms = rng.uniform(200.0, 2000.0);
    GymMetrics::default()
        .server_request_duration_ms(rng.uniform(5.0, 80.0))
        .rollout_duration_ms(rollout_ms)
        .verify_duration_ms(rng.uniform(1.0, 20.0))
        .record(meter);
    (verify_ok && !failed, rollout_ms)
}

fn main() {
    // nemo-lens reports export failures (and their recovery) through
    // `tracing`; a program shows them by installing a subscriber.
    // The OpenTelemetry crates' own lines (`MeterProvider.GlobalSet`, ...)
    // only at warning level unless OTEL_LOG_LEVEL asks for more.
    use tracing_subscriber::prelude::*;
    let sdk_level = match std::env::var("OTEL_LOG_LEVEL").as_deref() {
        Ok("debug") => tracing::Level::DEBUG,
        Ok("info") => tracing::Level::INFO,
        Ok("error") => tracing::Level::ERROR,
        _ => tracing::Level::WARN,
    };
    let filter = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("opentelemetry", sdk_level)
        .with_target("opentelemetry_sdk", sdk_level)
        .with_target("opentelemetry_otlp", sdk_level);
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .init();
    // Print errors with Display: they name the variable and the value.
    if let Err(e) = run() {
        eprintln!("demo: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let env = demo_env();
    let config = NemoLensConfig::from_lookup(env.clone())?;
    // Under torchrun, srun or mpirun, the launcher's rank; by hand, 0 of 1.
    let job = JobRank::detect(&env)?.unwrap_or(JobRank::SINGLE);
    let rank = job.rank;
    let telemetry = SetupOptions::new().env(env).setup_job(&config, job)?;
    // Only the URL goes to stdout: the console exporter owns the rest of it.
    match telemetry.prometheus_url() {
        Some(url) => {
            println!("serving Prometheus metrics at {url}");
            println!(
                "watch it live: nemo-lens top {url}  \
                 (from this repository: cargo run -p nemo-lens-cli -- top {url})"
            );
            println!(
                "exemplars (the trace of a request beside its latency bucket): \
                 curl -s -H 'Accept: application/openmetrics-text' {url} | grep ' # {{'"
            );
        }
        None if telemetry.is_exporting => {
            eprintln!("exporting with {}", config.exporter.as_str())
        }
        None => eprintln!("rank {rank} is not exporting"),
    }
    let meter = &telemetry.meter;
    // CPU (and GPUs, with the nvml feature) every 5 s, off this thread.
    let sampler = ProcessSampler::start(meter, Duration::from_secs(5));
    // NeMo-Gym's memory profiler, on this process as the one server it
    // spawned (a real gym launcher lists each server's root process).
    let profiler = MemoryProfiler::start(
        meter,
        [GymServer::new(
            "demo_env",
            "resources_servers",
            std::process::id(),
        )],
        Duration::from_secs(1),
    );
    let mut gym = GymState {
        sandboxes: (0..GYM_SERVERS).map(|_| None).collect(),
        connects: Arc::new(AtomicU64::new(0)),
    };
    let connects = Arc::clone(&gym.connects);
    let _connects = ConnectionPoolConnects::observe(meter, move || {
        [ConnectionPoolConnects::default()
            .destination("policy_model")
            .connects(connects.load(Ordering::Relaxed))]
    })?;

    // The inference engine's KV cache: 8192 blocks of 16 tokens.
    SchedulingMetrics::default()
        .kv_cache_block_size(16)
        .kv_cache_blocks(8192)
        .requests_waiting(0)
        .requests_running(0)
        .record(meter);
    let mut in_flight: Vec<(ScheduledRequest, Option<FinishReason>, Instant)> = Vec::new();

    // Spans of the simulated requests, sampled as OTEL_TRACES_SAMPLER says
    // (all of them by default) and exported nowhere: their ids are what the
    // exemplars on /metrics show.
    let tracer_provider = SdkTracerProvider::builder().build();
    let tracer = tracer_provider.tracer("nemo-lens-demo");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(rank));
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let step_time = Duration::from_millis(args.step_ms);
    let mut step = 0u64;
    let started = Instant::now();
    let mut next_progress = started;
    while Instant::now() < deadline && step < MAX_STEPS {
        let step_start = Instant::now();
        step += 1;

        // Generation: the trainer asks the inference server for rollouts.
        let mut generated_tokens = 0u64;
        let mut generation_s = 0.0;
        // The engine behind the server: last step's requests leave it, this
        // step's arrive, half of them start running, the others wait.
        for (request, reason, at) in in_flight.drain(..) {
            match reason {
                Some(reason) => request.finish_at(reason, at),
                None => drop(request), // aborted by its client
            }
        }
        for i in 0..REQUESTS_PER_STEP {
            let queued = Instant::now();
            let seconds = |s: f64| queued + Duration::from_secs_f64(s);
            let mut request = ScheduledRequest::queued_at(meter, queued);
            let prompt = rng.uniform(64.0, 512.0) as u64;
            request.prefix_cache(prompt, prompt * 3 / 4);
            let (queue_s, prefill_s) = (rng.uniform(0.001, 0.05), rng.uniform(0.01, 0.1));
            if i % 2 == 0 {
                request.start_at(seconds(queue_s));
                request.first_token_at(seconds(queue_s + prefill_s));
            }
            let end = seconds(queue_s + prefill_s + rng.uniform(0.05, 0.4));
            let reason = match rng.next_f64() {
                r if r < 0.02 => None,
                r if r < 0.5 => Some(FinishReason::Stop),
                _ => Some(FinishReason::Length),
            };
            in_flight.push((request, reason, end));
        }
        SchedulingMetrics::default()
            .kv_cache_usage(rng.uniform(0.2, 0.9))
            .record(meter);
        for _ in 0..REQUESTS_PER_STEP {
            // Request latency is uniform in [0.05, 0.5] s, so the p99 that
            // Prometheus interpolates lies in the (0.32, 0.64] bucket. The
            // server streams its tokens; the demo does not wait for them, so
            // it hands the guard the simulated instants.
            let latency = rng.uniform(0.05, 0.5);
            let input = rng.uniform(64.0, 512.0) as u64;
            let output = rng.uniform(128.0, 1024.0) as u64;
            let arrived = Instant::now();
            let at = |seconds: f64| arrived + Duration::from_secs_f64(seconds);
            // The request's span, current while its guard starts: what the
            // guard records links to it (the exemplars on /metrics).
            let span = tracer.start("chat llama-3-8b");
            let current = Context::current_with_span(span).attach();
            let mut req = InferenceRequest::start_at(meter, arrived)
                .model("llama-3-8b")
                .response_model("llama-3-8b-instruct")
                .server_address("127.0.0.1")
                .server_port(8000)
                .input_tokens(input)
                // A prefix cache: most of a prompt seen before.
                .cache_read_input_tokens(input * 3 / 4)
                .cache_write_input_tokens(input / 4)
                .reasoning_output_tokens(output / 8);
            drop(current);
            req.first_token_at(at(latency * rng.uniform(0.05, 0.2)));
            let outcome = rng.next_f64();
            // About 3 % of requests fail, under the 5 % error-ratio alert of
            // `nemo-lens rules`.
            if outcome < 0.02 {
                req.add_output_tokens(output / 4);
                req.fail_at("timeout", at(latency));
            } else if outcome < 0.03 {
                // The client went away: dropping the guard records the
                // request with error.type _OTHER.
                drop(req);
            } else {
                req.add_output_tokens(output);
                req.finish_at(at(latency));
                generated_tokens += output;
                generation_s += latency;
            }
        }
        // The server also embeds: its embeddings requests' tokens (under
        // the GenAI draft, on the embeddings metrics).
        let arrived = Instant::now();
        InferenceRequest::start_at(meter, arrived)
            .model("e5-large")
            .response_model("e5-large-v2")
            .operation_name(nemo_lens::instruments::EMBEDDINGS)
            .input_tokens(rng.uniform(16.0, 256.0) as u64)
            .finish_at(arrived + Duration::from_secs_f64(rng.uniform(0.005, 0.05)));

        // Rollouts: each gym server runs its environment and verifies.
        let mut successes = 0.0;
        let mut rollout_ms = 0.0;
        for server in 0..GYM_SERVERS {
            gym_server_resources(meter, &mut rng, &mut gym, server, step);
            let (verify_ok, server_rollout) = gym_server_rollout(meter, &mut rng, server, step);
            successes += f64::from(u8::from(verify_ok));
            rollout_ms += server_rollout;
        }
        GymMetrics::default()
            .verify_success_rate(successes / GYM_SERVERS as f64)
            .active_servers(GYM_SERVERS)
            .record(meter);

        // The optimiser step.
        let progress = step as f64 / (step as f64 + 100.0);
        let reward = 0.2 + 0.7 * progress + rng.uniform(-0.05, 0.05);
        RlMetrics::default()
            .reward_mean(reward)
            .kl_divergence(0.01 + 0.02 * progress)
            .policy_loss(-0.3 * (1.0 - progress) + rng.uniform(-0.02, 0.02))
            .value_loss(0.1 * (1.0 - progress) + 0.01)
            .entropy(2.0 - progress)
            .response_length_mean(generated_tokens as f64 / REQUESTS_PER_STEP as f64)
            .grad_norm(rng.uniform(0.5, 2.0))
            .learning_rate(1e-6)
            .throughput_tokens_per_sec(generated_tokens as f64 / generation_s.max(1e-3))
            .generation_duration_ms(generation_s * 1000.0)
            .rollout_duration_ms(rollout_ms)
            .record(meter);

        // Progress on stderr, so that stdout stays the console exporter's.
        if Instant::now() >= next_progress {
            next_progress += Duration::from_secs(2);
            eprintln!(
                "[{:>4}s / {}s] step {step:>5}  reward {reward:.3}  {} inference requests  \
                 {:.0} tokens/s",
                started.elapsed().as_secs(),
                args.seconds,
                step * REQUESTS_PER_STEP as u64,
                generated_tokens as f64 / generation_s.max(1e-3),
            );
        }

        if let Some(rest) = step_time.checked_sub(step_start.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    eprintln!("finished {step} steps");
    sampler.stop();
    profiler.stop();
    drop(gym);
    // A receiver that is gone at the end costs the last export, not the
    // run: the error says once what was lost, and the job still exits 0.
    if let Err(e) = telemetry.shutdown() {
        eprintln!("demo: rank {rank}: {e}");
    }
    Ok(())
}
