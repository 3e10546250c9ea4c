//! `nemo-lens top`: percentiles against the exact percentiles of known
//! samples (through nemo-lens's own endpoint, classic and native, and a
//! vLLM-shaped exposition served over HTTP), merged across replicas, and
//! the views rendered on ratatui's test backend.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nemo_lens::instruments::gym::{GymMetrics, SandboxMetrics};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::testing::Capture;
use nemo_lens::{EnvLookup, Instruments, NemoLensConfig, SetupOptions};
use nemo_lens_cli::top::distribution::Distribution;
use nemo_lens_cli::top::exposition::{parse_text, Value};
use nemo_lens_cli::top::fetch::{read, Outcome, Target};
use nemo_lens_cli::top::{render_text, Fleet, Mode, Screen};

/// The exact `q` quantile of `samples` (nearest rank).
fn exact(samples: &[f64], q: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// The bucket of `bounds` holding `value`: `(lower, upper]`.
fn bucket(bounds: &[f64], value: f64) -> (f64, f64) {
    let i = bounds.partition_point(|b| *b < value);
    let lower = if i == 0 { 0.0 } else { bounds[i - 1] };
    (lower, bounds.get(i).copied().unwrap_or(f64::INFINITY))
}

/// Samples spread over two orders of magnitude, deterministic.
fn samples(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            0.005 * 10_f64.powf(2.0 * ((x >> 11) as f64 / (1u64 << 53) as f64))
        })
        .collect()
}

const BOUNDS: [f64; 12] = [
    0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0,
];

/// A vLLM exposition (prometheus_client's text, `_created` lines and all)
/// with two engines; `ttft[e]` are engine `e`'s samples so far.
fn vllm(ttft: &[Vec<f64>; 2], requests: [f64; 2], errors: [f64; 2]) -> String {
    let mut out = String::new();
    for (name, kind) in [
        ("vllm:num_requests_running", "gauge"),
        ("vllm:num_requests_waiting", "gauge"),
        ("vllm:kv_cache_usage_perc", "gauge"),
    ] {
        out += &format!("# HELP {name} x\n# TYPE {name} {kind}\n");
        for (e, value) in [[3.0, 1.0, 0.25], [5.0, 30.0, 0.75]].iter().enumerate() {
            let v = match name {
                "vllm:num_requests_running" => value[0],
                "vllm:num_requests_waiting" => value[1],
                _ => value[2],
            };
            out += &format!("{name}{{engine=\"{e}\",model_name=\"llama\"}} {v:?}\n");
        }
    }
    out += "# HELP vllm:request_success_total x\n# TYPE vllm:request_success_total counter\n";
    for e in 0..2 {
        out += &format!(
            "vllm:request_success_total{{engine=\"{e}\",finished_reason=\"stop\",model_name=\"llama\"}} {:?}\n\
             vllm:request_success_total{{engine=\"{e}\",finished_reason=\"error\",model_name=\"llama\"}} {:?}\n",
            requests[e] - errors[e],
            errors[e]
        );
    }
    out += "# HELP vllm:time_to_first_token_seconds x\n# TYPE vllm:time_to_first_token_seconds histogram\n";
    for (e, samples) in ttft.iter().enumerate() {
        let labels = format!("engine=\"{e}\",model_name=\"llama\"");
        for bound in BOUNDS
            .iter()
            .map(|b| format!("{b:?}"))
            .chain(["+Inf".to_owned()])
        {
            let le: f64 = if bound == "+Inf" {
                f64::INFINITY
            } else {
                bound.parse().unwrap()
            };
            let count = samples.iter().filter(|s| **s <= le).count();
            out += &format!(
                "vllm:time_to_first_token_seconds_bucket{{{labels},le=\"{bound}\"}} {count}.0\n"
            );
        }
        out += &format!(
            "vllm:time_to_first_token_seconds_count{{{labels}}} {}.0\n",
            samples.len()
        );
        out += &format!(
            "vllm:time_to_first_token_seconds_sum{{{labels}}} {:?}\n",
            samples.iter().sum::<f64>()
        );
    }
    out += "# HELP vllm:time_to_first_token_seconds_created x\n# TYPE vllm:time_to_first_token_seconds_created gauge\n";
    out += "vllm:time_to_first_token_seconds_created{engine=\"0\",model_name=\"llama\"} 1.7e+09\n";
    out
}

/// Serves whatever `body` holds at the moment, on 127.0.0.1, for as long
/// as the test runs (each connection answered, then closed).
pub(crate) fn serve(body: Arc<Mutex<String>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(1000) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0_u8; 4096];
            let _ = stream.read(&mut request);
            let body = body.lock().unwrap().clone();
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{address}/metrics")
}

fn quantiles_within_buckets(distribution: &Distribution, truth: &[f64], bounds: &[f64]) {
    for q in [0.5, 0.95, 0.99] {
        let want = exact(truth, q);
        let got = distribution.quantile(q).unwrap();
        let (lower, upper) = bucket(bounds, want);
        assert!(
            lower <= got && got <= upper,
            "p{}: {got} outside ({lower}, {upper}] of the exact {want}",
            q * 100.0
        );
    }
}

#[test]
fn vllm_percentiles_are_those_of_the_interval_per_engine_and_merged() {
    let first = [samples(200, 1), samples(300, 2)];
    let later = [samples(400, 3), samples(100, 4)];
    let both = |e: usize| [first[e].clone(), later[e].clone()].concat();
    let body = Arc::new(Mutex::new(vllm(&first, [200.0, 300.0], [2.0, 0.0])));
    let url = serve(Arc::clone(&body));
    let mut fleet = Fleet::new(std::slice::from_ref(&url), Duration::from_secs(5));
    fleet.refresh();
    *body.lock().unwrap() = vllm(&[both(0), both(1)], [600.0, 400.0], [10.0, 0.0]);
    fleet.refresh();
    let (rows, all) = fleet.rows();
    assert_eq!(rows.len(), 2, "one row per engine: {rows:?}");
    for (e, row) in rows.iter().enumerate() {
        assert_eq!(row.replica, e.to_string());
        assert_eq!(row.vocabulary, Some("vllm"));
        quantiles_within_buckets(row.interval.ttft.as_ref().unwrap(), &later[e], &BOUNDS);
    }
    assert_eq!(rows[0].interval.error_rate, Some(8.0 / 400.0));
    assert_eq!(rows[1].interval.error_rate, Some(0.0));
    assert_eq!(
        (rows[0].interval.running, rows[1].interval.waiting),
        (Some(3.0), Some(30.0))
    );
    // All engines: the percentile of the union, not a mean of percentiles.
    let union = [later[0].clone(), later[1].clone()].concat();
    quantiles_within_buckets(all.interval.ttft.as_ref().unwrap(), &union, &BOUNDS);
    assert_eq!(all.interval.error_rate, Some(8.0 / 500.0));
    assert_eq!(all.interval.kv_cache_usage, Some(0.5));
    // vLLM has no time-per-token histogram in this exposition: absent.
    assert_eq!(all.interval.tpot, None);
}

/// `--slo` on a vLLM-shaped endpoint: each objective's attainment over the
/// interval from the bucket deltas, exactly the true share when the target
/// is a bucket bound, and a range holding the true share when it is not.
#[test]
fn slo_attainment_from_vllm_buckets_lies_where_the_true_share_lies() {
    let first = [samples(200, 21), samples(300, 22)];
    let later = [samples(400, 23), samples(100, 24)];
    let both = |e: usize| [first[e].clone(), later[e].clone()].concat();
    let body = Arc::new(Mutex::new(vllm(&first, [200.0, 300.0], [0.0, 0.0])));
    let url = serve(Arc::clone(&body));
    let mut fleet = Fleet::new(std::slice::from_ref(&url), Duration::from_secs(5));
    fleet.refresh();
    *body.lock().unwrap() = vllm(&[both(0), both(1)], [600.0, 400.0], [0.0, 0.0]);
    fleet.refresh();
    let (rows, all) = fleet.rows();
    let union = [later[0].clone(), later[1].clone()].concat();
    let truth = |samples: &[f64], target: f64| {
        samples.iter().filter(|s| **s <= target).count() as f64 / samples.len() as f64
    };
    // 100 ms is a bound: exact. 120 ms lies between 100 and 150 ms.
    for (stats, samples) in [(&rows[0].interval, &later[0]), (&all.interval, &union)] {
        for (target_ms, exact_share) in [(100.0, true), (120.0, false)] {
            let slo: nemo_lens::slo::Slo =
                format!("time_to_first_token:{target_ms}").parse().unwrap();
            let estimates = nemo_lens_cli::top::slo::estimates(&slo, stats);
            let within = estimates[0].within.expect("an estimate");
            let true_share = truth(samples, target_ms / 1000.0);
            if exact_share {
                assert!(
                    (within.estimate - true_share).abs() < 1e-12,
                    "{within:?} vs {true_share}"
                );
                assert_eq!(within.low, within.high);
            } else {
                assert!(
                    within.low <= true_share
                        && true_share <= within.high
                        && within.low < within.high,
                    "{true_share} outside {within:?}"
                );
            }
        }
    }
    // No time-per-token histogram here, and no request-latency one in top.
    let slo: nemo_lens::slo::Slo = "inter_token_latency:20 request_latency:1000"
        .parse()
        .unwrap();
    let estimates = nemo_lens_cli::top::slo::estimates(&slo, &all.interval);
    assert_eq!(
        estimates.iter().map(|e| e.why).collect::<Vec<_>>(),
        [
            Some("the endpoint exports no such histogram"),
            Some("top reads no request-latency histogram")
        ]
    );
}

#[test]
fn three_replicas_merge_to_the_percentile_of_the_union() {
    let parts = [samples(500, 10), samples(50, 11), samples(5000, 12)];
    let fleet_urls: Vec<String> = parts
        .iter()
        .map(|s| {
            let body = Arc::new(Mutex::new(vllm(
                &[Vec::new(), Vec::new()],
                [0.0; 2],
                [0.0; 2],
            )));
            let url = serve(Arc::clone(&body));
            (url, body, s.clone())
        })
        .map(|(url, body, s)| {
            // Engine 0 only; the first read sees none of them.
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                *body.lock().unwrap() = vllm(&[s, Vec::new()], [0.0; 2], [0.0; 2]);
            });
            url
        })
        .collect();
    let mut fleet = Fleet::new(&fleet_urls, Duration::from_secs(5));
    fleet.refresh();
    std::thread::sleep(Duration::from_millis(600));
    fleet.refresh();
    let (_, all) = fleet.rows();
    let union = parts.concat();
    let merged = all.interval.ttft.unwrap();
    assert_eq!(merged.count, union.len() as f64);
    quantiles_within_buckets(&merged, &union, &BOUNDS);
}

/// nemo-lens's own endpoint, with the histogram in explicit buckets and
/// as a native (exponential) histogram read over protobuf.
fn through_nemo_lens(aggregation: &str) {
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
        (
            "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
            aggregation,
        ),
    ]))
    .unwrap();
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .set_global(false)
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    let ttft = telemetry
        .meter
        .f64_histogram("gen_ai.server.time_to_first_token")
        .with_unit("s")
        .with_boundaries(BOUNDS.to_vec())
        .build();
    let requests = telemetry
        .meter
        .f64_histogram("gen_ai.server.request.duration")
        .with_unit("s")
        .build();
    let target = Target::parse(&telemetry.prometheus_url().unwrap()).unwrap();
    let (first, later) = (samples(300, 20), samples(700, 21));
    for s in &first {
        ttft.record(*s, &[]);
        requests.record(*s, &[]);
    }
    let Outcome::Read(before) = read(&target, Duration::from_secs(5)) else {
        panic!("the endpoint answers");
    };
    for s in &later {
        ttft.record(*s, &[]);
    }
    let Outcome::Read(now) = read(&target, Duration::from_secs(5)) else {
        panic!("the endpoint answers");
    };
    let family = "gen_ai_server_time_to_first_token_seconds";
    let value = |e: &nemo_lens_cli::top::exposition::Exposition| {
        e.family(family).next().unwrap().value.clone()
    };
    let (before, now) = (value(&before), value(&now));
    let native = matches!(
        &now,
        Value::Histogram {
            native: Some(_),
            ..
        }
    );
    assert_eq!(native, aggregation.starts_with("base2"), "{now:?}");
    let d = Distribution::between(Some(&before), &now).unwrap();
    assert_eq!(d.count, later.len() as f64);
    if native {
        // Native buckets at the scale the SDK settled on: within the width
        // of the bucket holding the exact value.
        let Value::Histogram {
            native: Some(n), ..
        } = &now
        else {
            unreachable!()
        };
        let base = 2_f64.powf(2_f64.powi(-n.schema));
        for q in [0.5, 0.95, 0.99] {
            let want = exact(&later, q);
            let got = d.quantile(q).unwrap();
            assert!(
                got / want <= base && want / got <= base,
                "p{q}: {got} against {want} (base {base})"
            );
        }
    } else {
        quantiles_within_buckets(&d, &later, &BOUNDS);
    }
    telemetry.shutdown().unwrap();
}

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn nemo_lens_endpoint_percentiles_in_explicit_buckets() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    through_nemo_lens("explicit_bucket_histogram");
}

#[test]
fn nemo_lens_endpoint_percentiles_in_native_buckets() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    through_nemo_lens("base2_exponential_bucket_histogram");
}

/// A fleet fed expositions directly: `reads[i]` are endpoint `i`'s two
/// reads, a second apart (`None`: that read failed).
pub(crate) fn fleet_of(reads: Vec<[Option<String>; 2]>) -> Fleet {
    let urls: Vec<String> = (0..reads.len())
        .map(|i| format!("http://10.0.0.{i}:8000/metrics"))
        .collect();
    let mut fleet = Fleet::new(&urls, Duration::from_secs(1));
    let start = Instant::now();
    for (i, pair) in reads.into_iter().enumerate() {
        for (n, body) in pair.into_iter().enumerate() {
            let outcome = match body {
                Some(text) => Outcome::Read(parse_text(&text).unwrap()),
                None => Outcome::Failed("Connection refused (os error 111)".into()),
            };
            fleet.record(i, start + Duration::from_secs(n as u64), outcome);
        }
    }
    fleet
}

fn screen(mode: Mode) -> Screen {
    Screen {
        mode,
        selected: 0,
        interval: 2.0,
        keys: true,
    }
}

fn sglang(running: f64, requests: f64) -> String {
    format!(
        "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{{dp_rank=\"0\",model_name=\"m\",tp_rank=\"0\"}} {running:?}\n\
         # TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs{{dp_rank=\"0\",model_name=\"m\",tp_rank=\"0\"}} 2.0\n\
         # TYPE sglang:token_usage gauge\nsglang:token_usage{{dp_rank=\"0\",model_name=\"m\",tp_rank=\"0\"}} 0.5\n\
         # TYPE sglang:num_requests_total counter\nsglang:num_requests_total{{model_name=\"m\"}} {requests:?}\n\
         # TYPE sglang:time_to_first_token_seconds histogram\n\
         sglang:time_to_first_token_seconds_bucket{{model_name=\"m\",le=\"0.1\"}} {requests:?}\n\
         sglang:time_to_first_token_seconds_bucket{{model_name=\"m\",le=\"+Inf\"}} {requests:?}\n\
         sglang:time_to_first_token_seconds_count{{model_name=\"m\"}} {requests:?}\n\
         sglang:time_to_first_token_seconds_sum{{model_name=\"m\"}} 1.0\n"
    )
}

fn dynamo(requests: f64, errors: f64) -> String {
    format!(
        "# TYPE dynamo_frontend_inflight_requests gauge\ndynamo_frontend_inflight_requests{{model=\"m\"}} 7\n\
         # TYPE dynamo_frontend_queued_requests gauge\ndynamo_frontend_queued_requests{{model=\"m\"}} 1\n\
         # TYPE dynamo_frontend_requests_total counter\n\
         dynamo_frontend_requests_total{{endpoint=\"chat_completions\",model=\"m\",request_type=\"stream\",status=\"success\"}} {:?}\n\
         dynamo_frontend_requests_total{{endpoint=\"chat_completions\",model=\"m\",request_type=\"stream\",status=\"error\"}} {errors:?}\n\
         # TYPE dynamo_frontend_output_tokens_total counter\ndynamo_frontend_output_tokens_total{{model=\"m\"}} {:?}\n",
        requests - errors,
        requests * 100.0
    )
}

fn nemo_lens_text(step: u32) -> String {
    let capture = Capture::new();
    let meter = capture.meter();
    RlMetrics::default()
        .reward_mean(0.25 + f64::from(step) / 100.0)
        .kl_divergence(0.02)
        .generation_duration_ms(1200.0)
        .record(meter);
    GymMetrics::default().active_servers(4).record(meter);
    SandboxMetrics::default()
        .active(3)
        .startup_ms(900.0)
        .provider("docker")
        .record(meter);
    capture.exposition()
}

#[test]
fn the_serving_view_shows_every_vocabulary_and_a_down_and_a_stale_replica() {
    let fleet = fleet_of(vec![
        [
            Some(vllm(
                &[samples(100, 1), samples(100, 2)],
                [100.0, 100.0],
                [0.0, 0.0],
            )),
            Some(vllm(
                &[samples(300, 1), samples(200, 2)],
                [300.0, 200.0],
                [4.0, 0.0],
            )),
        ],
        [Some(sglang(4.0, 10.0)), Some(sglang(6.0, 30.0))],
        [Some(dynamo(100.0, 0.0)), Some(dynamo(150.0, 5.0))],
        [None, None],
        [Some(sglang(1.0, 1.0)), None],
    ]);
    let text = render_text(&fleet, &screen(Mode::Serving), 160);
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} in\n{text}"))
            .to_owned()
    };
    // vLLM: one row per engine; 200 requests in a second, 4 failed.
    let engine0 = line("10.0.0.0:8000/metrics [0]");
    assert!(
        engine0.contains(" up ") && engine0.contains("200.0") && engine0.contains("2.0%"),
        "{engine0}"
    );
    assert!(
        line("10.0.0.0:8000/metrics [1]").contains("100.0"),
        "{text}"
    );
    // SGLang: 20 requests a second, KV cache at half; no token rates.
    let sglang_row = line("10.0.0.1:8000");
    assert!(
        sglang_row.contains("20.0") && sglang_row.contains("50.0%"),
        "{sglang_row}"
    );
    // Dynamo: 50 requests a second, 5 of them failed, output tokens.
    let dynamo_row = line("10.0.0.2:8000");
    assert!(
        dynamo_row.contains("50.0") && dynamo_row.contains("10.0%") && dynamo_row.contains("5000"),
        "{dynamo_row}"
    );
    assert!(line("10.0.0.3:8000").contains("down"), "{text}");
    assert!(line("10.0.0.4:8000").contains("stale"), "{text}");
    let all = line("all ");
    assert!(
        all.contains("370.0"),
        "all replicas: 200 + 100 + 20 + 50 requests/s: {all}"
    );
    // Engine 1 of the vLLM endpoint has 30 waiting against 1 to 2 elsewhere.
    assert!(
        text.contains("imbalance: http://10.0.0.0:8000/metrics [1] queue"),
        "{text}"
    );
}

#[test]
fn a_narrow_terminal_keeps_the_essential_columns() {
    let fleet = fleet_of(vec![[Some(sglang(4.0, 10.0)), Some(sglang(6.0, 30.0))]]);
    let text = render_text(&fleet, &screen(Mode::Serving), 80);
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(
        text.contains("replica") && text.contains("status") && text.contains("run"),
        "{text}"
    );
    assert!(
        !text.contains("tpot"),
        "the narrow view drops time per token: {text}"
    );
}

#[test]
fn the_detail_view_has_a_sparkline_per_signal() {
    let mut reads: Vec<Option<String>> = Vec::new();
    for i in 0..2 {
        reads.push(Some(sglang(f64::from(i) * 2.0, f64::from(i) * 10.0)));
    }
    let fleet = fleet_of(vec![[reads[0].clone(), reads[1].clone()]]);
    let text = render_text(&fleet, &screen(Mode::Detail), 100);
    for title in [
        "running: 2",
        "waiting: 2",
        "kv cache: 50.0%",
        "req/s: 10.0",
        "ttft p95 ms",
        "tpot p95 ms: —",
    ] {
        assert!(text.contains(title), "{title} in\n{text}");
    }
    assert!(text.contains("sglang"), "{text}");
}

#[test]
fn the_rl_and_gym_views_read_the_declared_names() {
    let fleet = fleet_of(vec![[Some(nemo_lens_text(0)), Some(nemo_lens_text(5))]]);
    let rl = render_text(&fleet, &screen(Mode::Rl), 160);
    let row = rl.lines().find(|l| l.contains("10.0.0.0")).unwrap();
    assert!(
        row.contains("0.300") && row.contains("0.020"),
        "reward and kl: {rl}"
    );
    let gym = render_text(&fleet, &screen(Mode::Gym), 160);
    let row = gym.lines().find(|l| l.contains("10.0.0.0")).unwrap();
    assert!(
        row.contains("3.000") && row.contains("4.000"),
        "sandboxes and servers: {gym}"
    );
}

/// An endpoint that accepts and never answers, and one that serves a web
/// page: each shows in its row, and neither holds up the refresh (reads run
/// at once, each within the timeout).
#[test]
fn a_silent_and_a_garbage_endpoint_show_in_their_rows_without_stalling() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/metrics", silent.local_addr().unwrap());
    // Accepts (the backlog does) and never writes: held until the test ends.
    let _held = std::thread::spawn(move || {
        let connections: Vec<_> = silent.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(5));
        drop(connections);
    });
    let garbage = serve(Arc::new(Mutex::new(
        "<html><body>Not Found</body></html>".to_owned(),
    )));
    let good = serve(Arc::new(Mutex::new(sglang(2.0, 5.0))));
    let mut fleet = Fleet::new(&[silent_url, garbage, good], Duration::from_millis(500));
    let started = Instant::now();
    fleet.refresh();
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(2000),
        "one refresh took {took:?}"
    );
    let (rows, _) = fleet.rows();
    assert_eq!(rows[0].status.as_str(), "down");
    assert!(
        rows[0].error.as_deref().unwrap().contains("timed out"),
        "{:?}",
        rows[0]
    );
    assert_eq!(rows[1].status.as_str(), "down");
    assert!(
        rows[1]
            .error
            .as_deref()
            .unwrap()
            .contains("not a Prometheus sample"),
        "{:?}",
        rows[1]
    );
    assert_eq!(rows[2].status.as_str(), "up");
    assert_eq!(rows[2].interval.running, Some(2.0));
}

/// Without a terminal, `nemo-lens top` prints one table and exits 0, down
/// replicas and all; `--once --json` prints one object of the contract.
#[test]
fn without_a_terminal_top_prints_once_and_exits() {
    let good = serve(Arc::new(Mutex::new(sglang(2.0, 5.0))));
    let refused = {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        format!("127.0.0.1:{port}")
    };
    let run = |extra: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
            .args(["top", "--interval", "0.2"])
            .args(extra)
            .args([good.as_str(), refused.as_str()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let table = run(&[]);
    assert!(table.contains("1/2 endpoints up"), "{table}");
    // Printed once: no keys to press, and the down endpoint's reason whole.
    assert!(!table.contains("q quit"), "{table}");
    let reason = table
        .lines()
        .find(|l| l.starts_with(&format!("{refused} is down: ")))
        .unwrap_or_else(|| panic!("the reason in full:\n{table}"));
    assert!(reason.ends_with("(os error 111)"), "{reason}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&good) && l.contains(" up ")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&refused) && l.contains("down")),
        "{table}"
    );
    let object: serde_json::Value = serde_json::from_str(&run(&["--once", "--json"])).unwrap();
    let replicas = object["replicas"].as_array().unwrap();
    assert_eq!(replicas[0]["url"], good.as_str());
    assert_eq!(replicas[0]["status"], "up");
    assert_eq!(replicas[0]["running"], 2.0);
    assert_eq!(replicas[1]["url"], refused.as_str());
    assert_eq!(replicas[1]["status"], "down");
    assert!(replicas[1]["running"].is_null());
    for key in [
        "running",
        "waiting",
        "kv_cache_usage",
        "requests_per_s",
        "input_tokens_per_s",
        "output_tokens_per_s",
        "error_rate",
        "ttft_s",
        "tpot_s",
    ] {
        assert!(object["all"].get(key).is_some(), "all.{key}: {object}");
    }
    assert!(object["all"].get("url").is_none() && object["all"].get("status").is_none());
    // SGLang has no input token counter here: null, never 0.
    assert!(object["all"]["input_tokens_per_s"].is_null(), "{object}");
}
