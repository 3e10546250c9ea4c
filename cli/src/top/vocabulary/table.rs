//! Every vocabulary `top` reads, with the release each was read from.
//! Alternatives are tried in order: the current name first, the names of
//! older releases after it.

use super::Filter::{All, Both, Is, Set, Starts, Unset};
use super::Source::{Count, Number, Sum};
use super::Vocabulary;

/// Every vocabulary `top` reads, most specific first: an engine's worker
/// under Dynamo also exports `dynamo_component_*`, and is read in its
/// engine's names.
pub static VOCABULARIES: &[Vocabulary] = &[
    Vocabulary {
        name: "vllm",
        release: "vLLM 0.34.0; kv gpu_cache_usage_perc and TPOT time_per_output_token_seconds \
                  from releases before 0.11",
        marks: &[
            "vllm:num_requests_running",
            "vllm:time_to_first_token_seconds",
        ],
        replica_label: Some("engine"),
        running: &[Number("vllm:num_requests_running", All)],
        waiting: &[Number("vllm:num_requests_waiting", All)],
        kv_cache: &[
            Number("vllm:kv_cache_usage_perc", All),
            Number("vllm:gpu_cache_usage_perc", All),
        ],
        // Every finish reason (stop, length, abort, repetition, error)
        // is a request; only `error` failed.
        requests: &[Number("vllm:request_success_total", All)],
        errors: &[Number(
            "vllm:request_success_total",
            Is("finished_reason", "error"),
        )],
        // Refused at admission (a full queue: a 503), never in
        // request_success_total.
        rejected: &[Number("vllm:admission_rejections_total", All)],
        input_tokens: &[Number("vllm:prompt_tokens_total", All)],
        output_tokens: &[Number("vllm:generation_tokens_total", All)],
        ttft: &["vllm:time_to_first_token_seconds"],
        // One value per request, then (older) per token, then per gap
        // between tokens, which 0.34 keeps when the per-request one is off.
        tpot: &[
            "vllm:request_time_per_output_token_seconds",
            "vllm:time_per_output_token_seconds",
            "vllm:inter_token_latency_seconds",
        ],
    },
    Vocabulary {
        name: "sglang",
        release: "SGLang 0.5.23; requests from e2e_request_latency_seconds and TPOT \
                  time_per_output_token_seconds from earlier releases",
        marks: &[
            "sglang:num_running_reqs",
            "sglang:time_to_first_token_seconds",
        ],
        replica_label: Some("dp_rank"),
        running: &[Number("sglang:num_running_reqs", All)],
        waiting: &[Number("sglang:num_queue_reqs", All)],
        kv_cache: &[Number("sglang:token_usage", All)],
        requests: &[
            Number("sglang:num_requests_total", All),
            Count("sglang:e2e_request_latency_seconds", All),
        ],
        // The HTTP server's 5xx answers, on whenever metrics are: a truer
        // source than aborted requests, which older releases have alone.
        errors: &[
            Number("sglang:http_responses_total", Starts("status_code", "5")),
            Number("sglang:num_aborted_requests_total", All),
        ],
        rejected: &[],
        input_tokens: &[Number("sglang:prompt_tokens_total", All)],
        output_tokens: &[Number("sglang:generation_tokens_total", All)],
        ttft: &["sglang:time_to_first_token_seconds"],
        tpot: &[
            "sglang:inter_token_latency_seconds",
            "sglang:time_per_output_token_seconds",
        ],
    },
    Vocabulary {
        name: "trtllm",
        release: "TensorRT-LLM 1.1 under Dynamo 1.x (trtllm_* from the engine, \
                  dynamo_component_* from the worker)",
        marks: &[
            "trtllm_time_to_first_token_seconds",
            "trtllm_request_success_total",
        ],
        replica_label: None,
        running: &[Number(
            "dynamo_component_inflight_requests",
            Is("dynamo_endpoint", "generate"),
        )],
        waiting: &[],
        kv_cache: &[
            Number("dynamo_component_gpu_cache_usage_percent", All),
            Number("dynamo_component_kvstats_gpu_cache_usage_percent", All),
        ],
        requests: &[
            Number("trtllm_request_success_total", All),
            Number(
                "dynamo_component_requests_total",
                Is("dynamo_endpoint", "generate"),
            ),
        ],
        errors: &[],
        rejected: &[],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &["trtllm_time_to_first_token_seconds"],
        tpot: &["trtllm_time_per_output_token_seconds"],
    },
    Vocabulary {
        name: "dynamo",
        release: "Dynamo 1.6.1 frontend (active_requests since 1.4, failures_total since 1.6; \
                  a prefix renamed by DYN_METRICS_PREFIX is recognised)",
        marks: &[
            "dynamo_frontend_requests_total",
            "dynamo_frontend_active_requests",
            "dynamo_frontend_inflight_requests",
        ],
        replica_label: None,
        running: &[
            Number("dynamo_frontend_active_requests", All),
            Number("dynamo_frontend_inflight_requests", All),
        ],
        waiting: &[Number("dynamo_frontend_queued_requests", All)],
        // A frontend and a worker in one process.
        kv_cache: &[
            Number("dynamo_component_gpu_cache_usage_percent", All),
            Number("dynamo_component_kvstats_gpu_cache_usage_percent", All),
        ],
        requests: &[Number("dynamo_frontend_requests_total", All)],
        errors: &[
            Number("dynamo_frontend_failures_total", All),
            Number("dynamo_frontend_requests_total", Is("status", "error")),
        ],
        rejected: &[],
        input_tokens: &[Sum("dynamo_frontend_input_sequence_tokens", All)],
        output_tokens: &[Number("dynamo_frontend_output_tokens_total", All)],
        ttft: &["dynamo_frontend_time_to_first_token_seconds"],
        tpot: &["dynamo_frontend_inter_token_latency_seconds"],
    },
    Vocabulary {
        name: "dynamo-worker",
        release: "Dynamo 1.6.1 worker of another engine (gpu_cache_usage_percent; \
                  kvstats_gpu_cache_usage_percent before 1.0)",
        marks: &[
            "dynamo_component_gpu_cache_usage_percent",
            "dynamo_component_kvstats_gpu_cache_usage_percent",
        ],
        replica_label: None,
        running: &[Number(
            "dynamo_component_inflight_requests",
            Is("dynamo_endpoint", "generate"),
        )],
        waiting: &[],
        kv_cache: &[
            Number("dynamo_component_gpu_cache_usage_percent", All),
            Number("dynamo_component_kvstats_gpu_cache_usage_percent", All),
        ],
        requests: &[Number(
            "dynamo_component_requests_total",
            Is("dynamo_endpoint", "generate"),
        )],
        errors: &[],
        rejected: &[],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "smg",
        release: "smg 1.13 (smg-project HEAD); the queue from smg_scheduler_queue_depth in \
                  1.0.1 to 1.9.0",
        marks: &["smg_router_requests_total"],
        replica_label: None,
        running: &[Number("smg_worker_requests_active", All)],
        waiting: &[
            Number("smg_admission_queue_depth", All),
            Number("smg_scheduler_queue_depth", All),
        ],
        kv_cache: &[],
        requests: &[Number("smg_router_requests_total", All)],
        errors: &[Number(
            "smg_http_responses_total",
            Starts("status_code", "5"),
        )],
        rejected: &[],
        input_tokens: &[Number("smg_router_tokens_total", Is("token_type", "input"))],
        output_tokens: &[Number(
            "smg_router_tokens_total",
            Is("token_type", "output"),
        )],
        ttft: &["smg_router_ttft_seconds"],
        tpot: &["smg_router_tpot_seconds"],
    },
    Vocabulary {
        name: "llama.cpp",
        release: "llama.cpp llama-server with --metrics (b7000s) and ik_llama.cpp; no request \
                  counter and no histograms, so requests, errors, TTFT and TPOT stay absent",
        marks: &[
            "llamacpp:requests_processing",
            "llamacpp:tokens_predicted_total",
        ],
        replica_label: None,
        running: &[Number("llamacpp:requests_processing", All)],
        waiting: &[Number("llamacpp:requests_deferred", All)],
        kv_cache: &[Number("llamacpp:kv_cache_usage_ratio", All)],
        requests: &[],
        errors: &[],
        rejected: &[],
        input_tokens: &[Number("llamacpp:prompt_tokens_total", All)],
        output_tokens: &[Number("llamacpp:tokens_predicted_total", All)],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "vllm-router",
        release: "vllm-router (production-stack) HEAD, 2026-12",
        marks: &["vllm_router_requests_total"],
        replica_label: None,
        running: &[Number("vllm_router_running_requests", All)],
        waiting: &[],
        kv_cache: &[],
        requests: &[Number("vllm_router_requests_total", All)],
        errors: &[Number("vllm_router_request_errors_total", All)],
        rejected: &[],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "tgi",
        release: "text-generation-inference 3.3.7",
        marks: &["tgi_request_count"],
        replica_label: None,
        running: &[],
        waiting: &[Number("tgi_queue_size", All)],
        kv_cache: &[],
        requests: &[Number("tgi_request_count", All)],
        errors: &[Number("tgi_request_failure", All)],
        rejected: &[],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "tei",
        release: "text-embeddings-inference 1.9.3",
        marks: &["te_request_count"],
        replica_label: None,
        running: &[],
        waiting: &[Number("te_queue_size", All)],
        kv_cache: &[],
        requests: &[Number("te_request_count", All)],
        errors: &[Number("te_request_failure", All)],
        rejected: &[],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    // Last: a service that also exports nemo-lens's names beside its own
    // is read in its own vocabulary.
    Vocabulary {
        name: "nemo-lens",
        release: "nemo-lens (this release; the GenAI conventions' server metrics, Lens 0.2.0's \
                  client token usage)",
        marks: &[
            "gen_ai_server_request_duration_seconds",
            "nemo_inference_requests_running",
        ],
        replica_label: None,
        running: &[Number("nemo_inference_requests_running", All)],
        waiting: &[Number("nemo_inference_requests_waiting", All)],
        kv_cache: &[Number("nemo_inference_kv_cache_usage_ratio", All)],
        requests: &[Count("gen_ai_server_request_duration_seconds", All)],
        errors: &[Count(
            "gen_ai_server_request_duration_seconds",
            Set("error_type"),
        )],
        rejected: &[],
        // What the server served: a gateway's calls to its backends
        // (`ModelCall`, with `server.address`) land on the same instrument
        // and would count each token again.
        input_tokens: &[
            Number("gen_ai_client_inference_usage_input_tokens_total", All),
            Sum(
                "gen_ai_client_token_usage",
                Both(&Is("gen_ai_token_type", "input"), &Unset("server_address")),
            ),
        ],
        output_tokens: &[
            Number("gen_ai_client_inference_usage_output_tokens_total", All),
            Sum(
                "gen_ai_client_token_usage",
                Both(&Is("gen_ai_token_type", "output"), &Unset("server_address")),
            ),
        ],
        ttft: &["gen_ai_server_time_to_first_token_seconds"],
        tpot: &["gen_ai_server_time_per_output_token_seconds"],
    },
];
