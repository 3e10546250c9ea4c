//! The names each kind of server exports its golden signals under, and how
//! to read them: recognised from the families an endpoint has. What a
//! vocabulary lacks stays absent (`None`), never zero.

use super::exposition::{Exposition, Labels};

/// Which series of a family count.
#[derive(Debug, Clone, Copy)]
pub enum Filter {
    /// All of them.
    All,
    /// Those whose `label` is `value`.
    Is(&'static str, &'static str),
    /// Those whose `label` is set and not empty.
    Set(&'static str),
    /// Those whose `label` starts with the text.
    Starts(&'static str, &'static str),
}

impl Filter {
    /// Whether a series with `labels` counts.
    pub fn keeps(self, labels: &Labels) -> bool {
        match self {
            Filter::All => true,
            Filter::Is(label, value) => labels.get(label).is_some_and(|v| v == value),
            Filter::Set(label) => labels.get(label).is_some_and(|v| !v.is_empty()),
            Filter::Starts(label, prefix) => {
                labels.get(label).is_some_and(|v| v.starts_with(prefix))
            }
        }
    }
}

/// Where one number comes from: alternatives, the first the endpoint has.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A gauge or counter family's samples.
    Number(&'static str, Filter),
    /// A histogram family's observation count.
    Count(&'static str, Filter),
    /// A histogram family's sum (tokens recorded per request).
    Sum(&'static str, Filter),
}

impl Source {
    /// The family it reads.
    pub fn family(self) -> &'static str {
        match self {
            Source::Number(f, _) | Source::Count(f, _) | Source::Sum(f, _) => f,
        }
    }
}

/// One server kind's names.
#[derive(Debug)]
pub struct Vocabulary {
    /// Shown in the view.
    pub name: &'static str,
    /// A family only this kind exports: its presence picks the vocabulary.
    pub marks: &'static [&'static str],
    /// The label that tells engines or data-parallel ranks apart within
    /// one endpoint.
    pub replica_label: Option<&'static str>,
    /// Requests running.
    pub running: &'static [Source],
    /// Requests waiting.
    pub waiting: &'static [Source],
    /// A fraction, 0 to 1.
    pub kv_cache: &'static [Source],
    /// Requests finished, a counter.
    pub requests: &'static [Source],
    /// Requests failed, a counter.
    pub errors: &'static [Source],
    /// Input tokens, a counter.
    pub input_tokens: &'static [Source],
    /// Output tokens, a counter.
    pub output_tokens: &'static [Source],
    /// Histograms, in seconds.
    pub ttft: &'static [&'static str],
    /// Time per output token (or between tokens).
    pub tpot: &'static [&'static str],
}

use Filter::{All, Is, Set, Starts};
use Source::{Count, Number, Sum};

/// Every vocabulary `top` reads, most specific first.
pub static VOCABULARIES: &[Vocabulary] = &[
    Vocabulary {
        name: "vllm",
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
        requests: &[Number("vllm:request_success_total", All)],
        errors: &[Number(
            "vllm:request_success_total",
            Is("finished_reason", "error"),
        )],
        input_tokens: &[Number("vllm:prompt_tokens_total", All)],
        output_tokens: &[Number("vllm:generation_tokens_total", All)],
        ttft: &["vllm:time_to_first_token_seconds"],
        tpot: &[
            "vllm:request_time_per_output_token_seconds",
            "vllm:time_per_output_token_seconds",
        ],
    },
    Vocabulary {
        name: "sglang",
        marks: &[
            "sglang:num_running_reqs",
            "sglang:time_to_first_token_seconds",
        ],
        replica_label: Some("dp_rank"),
        running: &[Number("sglang:num_running_reqs", All)],
        waiting: &[Number("sglang:num_queue_reqs", All)],
        kv_cache: &[Number("sglang:token_usage", All)],
        requests: &[Number("sglang:num_requests_total", All)],
        errors: &[Number("sglang:num_aborted_requests_total", All)],
        input_tokens: &[Number("sglang:prompt_tokens_total", All)],
        output_tokens: &[Number("sglang:generation_tokens_total", All)],
        ttft: &["sglang:time_to_first_token_seconds"],
        tpot: &["sglang:inter_token_latency_seconds"],
    },
    Vocabulary {
        name: "dynamo",
        marks: &[
            "dynamo_frontend_requests_total",
            "dynamo_frontend_inflight_requests",
        ],
        replica_label: None,
        running: &[Number("dynamo_frontend_inflight_requests", All)],
        waiting: &[Number("dynamo_frontend_queued_requests", All)],
        kv_cache: &[Number(
            "dynamo_component_kvstats_gpu_cache_usage_percent",
            All,
        )],
        requests: &[Number("dynamo_frontend_requests_total", All)],
        errors: &[Number(
            "dynamo_frontend_requests_total",
            Is("status", "error"),
        )],
        input_tokens: &[Sum("dynamo_frontend_input_sequence_tokens", All)],
        output_tokens: &[Number("dynamo_frontend_output_tokens_total", All)],
        ttft: &["dynamo_frontend_time_to_first_token_seconds"],
        tpot: &["dynamo_frontend_inter_token_latency_seconds"],
    },
    Vocabulary {
        name: "smg",
        marks: &["smg_router_requests_total"],
        replica_label: None,
        running: &[Number("smg_worker_requests_active", All)],
        waiting: &[Number("smg_admission_queue_depth", All)],
        kv_cache: &[],
        requests: &[Number("smg_router_requests_total", All)],
        errors: &[Number(
            "smg_http_responses_total",
            Starts("status_code", "5"),
        )],
        input_tokens: &[Number("smg_router_tokens_total", Is("token_type", "input"))],
        output_tokens: &[Number(
            "smg_router_tokens_total",
            Is("token_type", "output"),
        )],
        ttft: &["smg_router_ttft_seconds"],
        tpot: &["smg_router_tpot_seconds"],
    },
    Vocabulary {
        name: "vllm-router",
        marks: &["vllm_router_requests_total"],
        replica_label: None,
        running: &[Number("vllm_router_running_requests", All)],
        waiting: &[],
        kv_cache: &[],
        requests: &[Number("vllm_router_requests_total", All)],
        errors: &[Number("vllm_router_request_errors_total", All)],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "tgi",
        marks: &["tgi_request_count"],
        replica_label: None,
        running: &[],
        waiting: &[Number("tgi_queue_size", All)],
        kv_cache: &[],
        requests: &[Number("tgi_request_count", All)],
        errors: &[Number("tgi_request_failure", All)],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    Vocabulary {
        name: "tei",
        marks: &["te_request_count"],
        replica_label: None,
        running: &[],
        waiting: &[Number("te_queue_size", All)],
        kv_cache: &[],
        requests: &[Number("te_request_count", All)],
        errors: &[Number("te_request_failure", All)],
        input_tokens: &[],
        output_tokens: &[],
        ttft: &[],
        tpot: &[],
    },
    // Last: a service that also exports nemo-lens's names beside its own
    // is read in its own vocabulary.
    Vocabulary {
        name: "nemo-lens",
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
        input_tokens: &[
            Number("gen_ai_client_inference_usage_input_tokens_total", All),
            Sum(
                "gen_ai_client_token_usage",
                Is("gen_ai_token_type", "input"),
            ),
        ],
        output_tokens: &[
            Number("gen_ai_client_inference_usage_output_tokens_total", All),
            Sum(
                "gen_ai_client_token_usage",
                Is("gen_ai_token_type", "output"),
            ),
        ],
        ttft: &["gen_ai_server_time_to_first_token_seconds"],
        tpot: &["gen_ai_server_time_per_output_token_seconds"],
    },
];

/// The vocabulary of `exposition`, if any is recognised.
pub fn recognise(exposition: &Exposition) -> Option<&'static Vocabulary> {
    VOCABULARIES
        .iter()
        .find(|v| v.marks.iter().any(|m| exposition.has(m)))
}
