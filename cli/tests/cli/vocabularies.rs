//! Each engine's names as its current release exports them, and the older
//! names kept as fallbacks: two reads a second apart, in the release's
//! exact names and labels.

use nemo_lens::testing::Capture;
use nemo_lens_cli::top::fleet::Row;
use nemo_lens_cli::top::stats::Percentiles;
use nemo_lens_test_support::gateway;

use crate::top::fleet_of;

/// The one row of an endpoint read as `before`, then `after` a second later.
fn row(before: String, after: String) -> Row {
    let (rows, _) = fleet_of(vec![[Some(before), Some(after)]]).rows();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    rows.into_iter().next().unwrap()
}

fn close(got: Option<f64>, want: f64) {
    let got = got.expect("a value");
    assert!((got - want).abs() < 1e-9, "{got}, want {want}");
}

/// vLLM 0.34.0: requests refused at admission (a full queue) are counted
/// apart, in `vllm:admission_rejections_total`; they are requests, and
/// failed ones. `repetition`, a new finish reason, is not a failure.
#[test]
fn vllm_counts_admission_rejections_as_errors_and_repetition_as_a_finish() {
    let body = |stop: f64, repetition: f64, rejected: f64| {
        format!(
            "# TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 8.0\n\
             # TYPE vllm:request_success_total counter\n\
             vllm:request_success_total{{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"}} {stop:?}\n\
             vllm:request_success_total{{engine=\"0\",finished_reason=\"repetition\",model_name=\"m\"}} {repetition:?}\n\
             # TYPE vllm:admission_rejections_total counter\n\
             vllm:admission_rejections_total{{model_name=\"m\",reason=\"queue_full\"}} {rejected:?}\n"
        )
    };
    let row = row(body(100.0, 5.0, 0.0), body(150.0, 15.0, 60.0));
    assert_eq!(row.vocabulary, Some("vllm"));
    // 50 stopped, 10 repeated themselves, 60 refused: 120 requests.
    close(row.interval.requests_per_s, 120.0);
    close(row.interval.error_rate, 0.5);
}

/// vLLM 0.34.0 has no `vllm:time_per_output_token_seconds`; with the
/// per-request histogram off, the time between tokens stands in.
#[test]
fn vllm_tpot_falls_back_to_the_inter_token_latency() {
    let body = |count: u64| {
        format!(
            "# TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 1.0\n\
             # TYPE vllm:inter_token_latency_seconds histogram\n\
             vllm:inter_token_latency_seconds_bucket{{engine=\"0\",le=\"0.01\",model_name=\"m\"}} 0.0\n\
             vllm:inter_token_latency_seconds_bucket{{engine=\"0\",le=\"0.025\",model_name=\"m\"}} {count}.0\n\
             vllm:inter_token_latency_seconds_bucket{{engine=\"0\",le=\"+Inf\",model_name=\"m\"}} {count}.0\n\
             vllm:inter_token_latency_seconds_count{{engine=\"0\",model_name=\"m\"}} {count}.0\n\
             vllm:inter_token_latency_seconds_sum{{engine=\"0\",model_name=\"m\"}} 1.0\n"
        )
    };
    let row = row(body(100), body(300));
    let tpot = Percentiles::of(row.interval.tpot.as_ref());
    // 200 gaps between 10 and 25 ms: the median halfway.
    close(tpot.p50, 0.0175);
}

/// SGLang 0.5.23 counts its HTTP server's answers by status code whenever
/// metrics are on: the 5xx are the failures, preferred over aborts.
#[test]
fn sglang_errors_are_its_5xx_responses_when_it_counts_them() {
    let body = |ok: f64, failed: f64, aborted: f64| {
        format!(
            "# TYPE sglang:num_running_reqs gauge\n\
             sglang:num_running_reqs{{model_name=\"m\"}} 3.0\n\
             # TYPE sglang:num_requests_total counter\n\
             sglang:num_requests_total{{model_name=\"m\"}} {:?}\n\
             # TYPE sglang:num_aborted_requests_total counter\n\
             sglang:num_aborted_requests_total{{model_name=\"m\"}} {aborted:?}\n\
             # TYPE sglang:http_responses_total counter\n\
             sglang:http_responses_total{{endpoint=\"/v1/chat/completions\",method=\"POST\",status_code=\"200\"}} {ok:?}\n\
             sglang:http_responses_total{{endpoint=\"/v1/chat/completions\",method=\"POST\",status_code=\"503\"}} {failed:?}\n",
            ok + failed
        )
    };
    let row = row(body(0.0, 0.0, 0.0), body(90.0, 10.0, 40.0));
    close(row.interval.requests_per_s, 100.0);
    // 10 answered 503; the 40 aborts (clients that went away) are not
    // failures of the server.
    close(row.interval.error_rate, 0.1);
}

/// SGLang before `num_requests_total` (the busy capture's release):
/// requests from the end-to-end latency histogram, TPOT per token.
#[test]
fn older_sglang_counts_requests_from_its_latency_histogram() {
    let body = |n: u64| {
        format!(
            "# TYPE sglang:num_running_reqs gauge\n\
             sglang:num_running_reqs{{model_name=\"m\"}} 3.0\n\
             # TYPE sglang:e2e_request_latency_seconds histogram\n\
             sglang:e2e_request_latency_seconds_bucket{{le=\"1.0\",model_name=\"m\"}} {n}.0\n\
             sglang:e2e_request_latency_seconds_bucket{{le=\"+Inf\",model_name=\"m\"}} {n}.0\n\
             sglang:e2e_request_latency_seconds_sum{{model_name=\"m\"}} 1.0\n\
             sglang:e2e_request_latency_seconds_count{{model_name=\"m\"}} {n}.0\n\
             # TYPE sglang:time_per_output_token_seconds histogram\n\
             sglang:time_per_output_token_seconds_bucket{{le=\"0.1\",model_name=\"m\"}} {n}.0\n\
             sglang:time_per_output_token_seconds_bucket{{le=\"+Inf\",model_name=\"m\"}} {n}.0\n\
             sglang:time_per_output_token_seconds_sum{{model_name=\"m\"}} 1.0\n\
             sglang:time_per_output_token_seconds_count{{model_name=\"m\"}} {n}.0\n"
        )
    };
    let row = row(body(10), body(30));
    close(row.interval.requests_per_s, 20.0);
    close(Percentiles::of(row.interval.tpot.as_ref()).p50, 0.05);
}

/// Dynamo 1.6.1's frontend: `active_requests` (1.4) before the older
/// `inflight_requests`, `failures_total` (1.6) as the failures.
#[test]
fn dynamo_frontend_reads_active_requests_and_failures() {
    let body = |requests: f64, failures: f64| {
        format!(
            "# TYPE dynamo_frontend_active_requests gauge\ndynamo_frontend_active_requests{{model=\"m\"}} 7\n\
             # TYPE dynamo_frontend_inflight_requests gauge\ndynamo_frontend_inflight_requests{{model=\"m\"}} 99\n\
             # TYPE dynamo_frontend_requests_total counter\n\
             dynamo_frontend_requests_total{{endpoint=\"chat_completions\",model=\"m\",request_type=\"stream\",status=\"success\"}} {requests}\n\
             # TYPE dynamo_frontend_failures_total counter\n\
             dynamo_frontend_failures_total{{error_type=\"internal\",model=\"m\"}} {failures}\n"
        )
    };
    let row = row(body(100.0, 0.0), body(200.0, 25.0));
    assert_eq!(row.vocabulary, Some("dynamo"));
    close(row.interval.running, 7.0);
    close(row.interval.error_rate, 0.25);
}

/// `DYN_METRICS_PREFIX=acme` renames every `dynamo_frontend_` name.
#[test]
fn a_dynamo_frontend_under_another_prefix_is_recognised() {
    let body = |requests: f64| {
        format!(
            "# TYPE acme_inflight_requests gauge\nacme_inflight_requests{{model=\"m\"}} 4\n\
             # TYPE acme_requests_total counter\n\
             acme_requests_total{{endpoint=\"chat_completions\",model=\"m\",request_type=\"stream\",status=\"success\"}} {requests}\n\
             # TYPE acme_time_to_first_token_seconds histogram\n\
             acme_time_to_first_token_seconds_bucket{{model=\"m\",le=\"+Inf\"}} {requests}\n\
             acme_time_to_first_token_seconds_sum{{model=\"m\"}} 1\n\
             acme_time_to_first_token_seconds_count{{model=\"m\"}} {requests}\n"
        )
    };
    let row = row(body(10.0), body(40.0));
    assert_eq!(row.vocabulary, Some("dynamo"));
    close(row.interval.running, 4.0);
    close(row.interval.requests_per_s, 30.0);
}

/// Every Dynamo release from 1.0 to 1.6.1 registers the worker's KV gauge
/// as `dynamo_component_gpu_cache_usage_percent` (0 to 1); older workers
/// and Dynamo's own captured examples have the `kvstats_` name.
#[test]
fn a_dynamo_worker_s_kv_cache_under_either_name() {
    for name in [
        "dynamo_component_gpu_cache_usage_percent",
        "dynamo_component_kvstats_gpu_cache_usage_percent",
    ] {
        let body = |requests: f64| {
            format!(
                "# TYPE {name} gauge\n{name}{{dynamo_component=\"backend\",dynamo_namespace=\"dynamo\"}} 0.375\n\
                 # TYPE dynamo_component_inflight_requests gauge\n\
                 dynamo_component_inflight_requests{{dynamo_component=\"backend\",dynamo_endpoint=\"generate\",dynamo_namespace=\"dynamo\",model=\"m\"}} 3\n\
                 # TYPE dynamo_component_requests_total counter\n\
                 dynamo_component_requests_total{{dynamo_component=\"backend\",dynamo_endpoint=\"generate\",dynamo_namespace=\"dynamo\",model=\"m\"}} {requests}\n"
            )
        };
        let row = row(body(1.0), body(6.0));
        assert_eq!(row.vocabulary, Some("dynamo-worker"), "{name}");
        close(row.interval.kv_cache_usage, 0.375);
        close(row.interval.running, 3.0);
        close(row.interval.requests_per_s, 5.0);
    }
}

/// smg 1.0.1 to 1.9.0 have `smg_scheduler_queue_depth{class}` where later
/// releases have `smg_admission_queue_depth`.
#[test]
fn older_smg_queues_by_priority_class() {
    let body =
        "# TYPE smg_router_requests_total counter\nsmg_router_requests_total{model=\"m\"} 10\n\
        # TYPE smg_scheduler_queue_depth gauge\n\
        smg_scheduler_queue_depth{class=\"high\"} 2\nsmg_scheduler_queue_depth{class=\"low\"} 5\n";
    let row = row(body.to_owned(), body.to_owned());
    assert_eq!(row.vocabulary, Some("smg"));
    close(row.interval.waiting, 7.0);
}

/// llama.cpp's server: gauges and counters, no request counter and no
/// histogram, so requests, errors and latencies stay absent, not zero.
#[test]
fn llama_cpp_reads_slots_and_tokens() {
    let body = |prompt: f64, predicted: f64| {
        format!(
            "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n\
             # TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total {prompt}\n\
             # TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total {predicted}\n\
             # TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio 0.25\n\
             # TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n\
             # TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 1\n"
        )
    };
    let row = row(body(1000.0, 500.0), body(1800.0, 740.0));
    assert_eq!(row.vocabulary, Some("llama.cpp"));
    close(row.interval.running, 2.0);
    close(row.interval.waiting, 1.0);
    close(row.interval.kv_cache_usage, 0.25);
    close(row.interval.input_tokens_per_s, 800.0);
    close(row.interval.output_tokens_per_s, 240.0);
    assert_eq!(row.interval.requests_per_s, None);
    assert_eq!(row.interval.error_rate, None);
    assert_eq!(Percentiles::of(row.interval.ttft.as_ref()).p50, None);
}

/// A gateway records what it served (the OpenAI layer, `InferenceRequest`)
/// and each call to a backend (`ModelCall`, with `server.address`) on the
/// same token-usage histogram: top counts the tokens served once.
#[test]
fn a_gateway_s_tokens_are_counted_once() {
    let capture = Capture::new();
    let meter = capture.meter();
    gateway::serve(meter, 1, 4);
    let before = capture.exposition();
    gateway::serve(meter, 1, 4);
    let after = capture.exposition();
    assert!(after.contains("server_address=\"10.0.0.0\""), "{after}");
    let row = row(before, after);
    assert_eq!(row.vocabulary, Some("nemo-lens"));
    close(row.interval.requests_per_s, 4.0);
    close(row.interval.input_tokens_per_s, 400.0);
    close(row.interval.output_tokens_per_s, 80.0);
}

/// `nemo-lens top --vocabularies`: every name each vocabulary reads, in the
/// order tried, and the release it was read from, so the next drift is a
/// diff.
#[test]
fn top_lists_its_vocabularies_with_their_releases() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nemo-lens"))
        .args(["top", "--vocabularies"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for vocabulary in nemo_lens_cli::top::vocabulary::VOCABULARIES {
        assert!(
            text.contains(&format!("{} ({})", vocabulary.name, vocabulary.release)),
            "{}:\n{text}",
            vocabulary.name
        );
    }
    for line in [
        "  kv cache: dynamo_component_gpu_cache_usage_percent, then dynamo_component_kvstats_gpu_cache_usage_percent",
        "  rejected (requests and errors): vllm:admission_rejections_total",
        "  errors: sglang:http_responses_total{status_code=~\"5.*\"}, then sglang:num_aborted_requests_total",
        "  waiting: smg_admission_queue_depth, then smg_scheduler_queue_depth",
        "  requests: —",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
}
