//! Every OpenTelemetry GenAI name this crate records, in one file: the server
//! set ([`InferenceMetrics`], which Python nemo-lens records) and the client
//! set ([`ModelCallMetrics`]). The GenAI conventions are still in development
//! and have renamed metrics before; a rename is a change here and nowhere
//! else (the request guards record through these sets).
//!
//! # Which conventions each name follows
//!
//! By default the sets record what Python nemo-lens 0.2.0 and its dashboards
//! use: the GenAI metrics of semantic-conventions v1.41.1, the last core
//! release that defined them (`gen_ai.server.*`, `gen_ai.client.operation.*`
//! and the `gen_ai.client.token.usage` histogram with `gen_ai.token.type`).
//!
//! With `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (or
//! [`SemconvOptIn`](nemo_lens_core::SemconvOptIn) on the meter) they follow the
//! conventions' own repository, semantic-conventions-genai (main, as of its
//! v0.1.0 release), instead:
//!
//! - token usage goes to the counters `gen_ai.client.inference.usage.input_tokens`
//!   and `.output_tokens` with `gen_ai.token.modality`, their subsets
//!   `...usage.cache_read.input_tokens`, `...usage.cache_write.input_tokens` and
//!   `...usage.reasoning.output_tokens`, and the per-call histograms
//!   `gen_ai.client.inference.operation.input_tokens` and `.output_tokens`
//!   (no modality; `error.type` on a failed call); `gen_ai.client.token.usage`
//!   and `gen_ai.token.type` are not recorded;
//! - the client's duration and chunk metrics take their inference names
//!   (PR #521): `gen_ai.client.inference.duration`,
//!   `gen_ai.client.inference.time_to_first_chunk` and
//!   `gen_ai.client.inference.time_per_output_chunk`;
//! - embeddings calls record on `gen_ai.client.embeddings.duration` and
//!   `gen_ai.client.embeddings.operation.input_tokens`;
//! - the `gen_ai.server.*` metrics are unchanged.
//!
//! The draft also changes what a call records (embeddings on their own
//! metrics, no tokens for `fetch_response`, a failed call's tokens or 0):
//! the guards apply it as a call ends, `follow_conventions` on a set filled
//! by hand.
//!
//! `gen_ai_latest_experimental/dup` records both names, for migrating
//! dashboards, and of the draft's other changes only those that leave the
//! old names' numbers as they were (embeddings copied to their own metrics,
//! not moved; no zeros).
//! The cache and reasoning counts have no name before the draft: they are
//! recorded only with the opt-in.
//!
//! Buckets are the ones the conventions advise; override them at setup with
//! [`SetupOptions::histogram_boundaries`](https://docs.rs/nemo-lens/latest/nemo_lens/telemetry/struct.SetupOptions.html#method.histogram_boundaries) when your
//! requests outlast them.

use nemo_lens_core::{Instruments, Meter};
use nemo_lens_macros::{Attributes, Instruments};
use opentelemetry::StringValue;

use crate::TokenModality;

mod draft;

pub(crate) use draft::Draft;
pub use draft::{EMBEDDINGS, FETCH_RESPONSE};

/// The attributes every GenAI measurement carries, on the server
/// ([`InferenceMetrics`]) and the client ([`ModelCallMetrics`]) side alike:
/// `gen_ai.provider.name` (default `nemo`) and, when set and not empty,
/// `gen_ai.request.model`, `gen_ai.response.model`, `server.address` and
/// `server.port`. Flattened into both sets, whose setters of the same names
/// fill it.
#[derive(Attributes, Default, Debug, Clone)]
#[attributes(crate = "nemo_lens_core")]
pub struct GenAiAttributes {
    /// The requested model, attached as `gen_ai.request.model`.
    #[attribute("gen_ai.request.model")]
    pub model: Option<StringValue>,

    /// The model provider, attached as `gen_ai.provider.name`.
    #[attribute("gen_ai.provider.name", default = "nemo")]
    pub provider_name: Option<StringValue>,

    /// The model that answered, attached as `gen_ai.response.model`.
    #[attribute("gen_ai.response.model")]
    pub response_model: Option<StringValue>,

    /// The server's address, attached as `server.address`.
    #[attribute("server.address")]
    pub server_address: Option<StringValue>,

    /// The server's port, attached as the integer `server.port`.
    #[attribute("server.port")]
    pub server_port: Option<u16>,
}

/// The [`GenAiAttributes`] setters on a set that flattens them as `base`, so
/// that `InferenceMetrics::default().model("m")` reads as before; each with
/// its `set_` twin through a borrow, as derived setters have.
macro_rules! base_setters {
    ($set:ident) => {
        impl $set {
            base_setters! {
                @pair
                /// Sets the requested model (`gen_ai.request.model`).
                model set_model (value: impl Into<StringValue>) value.into();
                /// Sets the provider (`gen_ai.provider.name`, default `nemo`).
                provider_name set_provider_name (value: impl Into<StringValue>) value.into();
                /// Sets the model that answered (`gen_ai.response.model`).
                response_model set_response_model (value: impl Into<StringValue>) value.into();
                /// Sets the server's address (`server.address`).
                server_address set_server_address (value: impl Into<StringValue>) value.into();
                /// Sets the server's port (`server.port`).
                server_port set_server_port (value: u16) value;
            }
        }
    };
    (@pair $($(#[$doc:meta])* $name:ident $set:ident ($($param:tt)*) $value:expr;)*) => {
        $(
            $(#[$doc])*
            #[must_use]
            #[inline]
            pub fn $name(mut self, $($param)*) -> Self {
                self.base.$name = Some($value);
                self
            }

            $(#[$doc])*
            ///
            /// The same through a borrow.
            #[inline]
            pub fn $set(&mut self, $($param)*) -> &mut Self {
                self.base.$name = Some($value);
                self
            }
        )*
    };
}

base_setters!(InferenceMetrics);
base_setters!(ModelCallMetrics);

/// Declares a GenAI set with the token fields that the server set
/// ([`InferenceMetrics`]) and the client set ([`ModelCallMetrics`]) share:
/// the same instruments under both conventions and their
/// `gen_ai.token.modality` attribute, written once. The set's own fields
/// come in two runs, `before` and `after` the token fields, so the
/// declaration order (which `declared` lists) stays as it was.
// rustfmt would rewrite the fields of the body; they are written as the
// derive reads them.
#[rustfmt::skip]
macro_rules! genai_set {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            before { $($before:tt)* }
            after { $($after:tt)* }
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($before)*

            /// Number of input and output tokens used.
            #[histogram(
                "gen_ai.client.token.usage",
                unit = "{token}",
                buckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
                attr("gen_ai.token.type" = "input"),
                until_opt_in = "gen_ai_latest_experimental"
            )]
            #[counter(
                "gen_ai.client.inference.usage.input_tokens",
                unit = "{token}",
                description = "The number of input (prompt) tokens used, including cached tokens.",
                opt_in = "gen_ai_latest_experimental"
            )]
            #[histogram(
                "gen_ai.client.inference.operation.input_tokens",
                unit = "{token}",
                description = "The number of input (prompt) tokens used per inference operation.",
                buckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub input_tokens: Option<u64>,

            /// Output tokens, recorded into the same instruments as the input tokens
            /// with `gen_ai.token.type = output` (by default), or into the draft's
            /// output-token counter and per-call histogram.
            #[histogram("gen_ai.client.token.usage", attr("gen_ai.token.type" = "output"))]
            #[counter(
                "gen_ai.client.inference.usage.output_tokens",
                unit = "{token}",
                description = "The number of output (completion) tokens used, including reasoning tokens.",
                opt_in = "gen_ai_latest_experimental"
            )]
            #[histogram(
                "gen_ai.client.inference.operation.output_tokens",
                unit = "{token}",
                description = "The number of output (completion) tokens used per inference operation.",
                buckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub output_tokens: Option<u64>,

            /// The number of input tokens served from a provider-managed cache.
            #[counter(
                "gen_ai.client.inference.usage.cache_read.input_tokens",
                unit = "{token}",
                opt_in = "gen_ai_latest_experimental"
            )]
            pub cache_read_input_tokens: Option<u64>,

            /// The number of input tokens written to a provider-managed cache.
            #[counter(
                "gen_ai.client.inference.usage.cache_write.input_tokens",
                unit = "{token}",
                opt_in = "gen_ai_latest_experimental"
            )]
            pub cache_write_input_tokens: Option<u64>,

            /// The number of output tokens used for reasoning (e.g. chain-of-thought, extended thinking).
            #[counter(
                "gen_ai.client.inference.usage.reasoning.output_tokens",
                unit = "{token}",
                opt_in = "gen_ai_latest_experimental"
            )]
            pub reasoning_output_tokens: Option<u64>,

            /// The number of input tokens of an embeddings call: where the draft
            /// conventions record an embeddings call's tokens, which the guards
            /// move here from `input_tokens` under the opt-in.
            #[histogram(
                "gen_ai.client.embeddings.operation.input_tokens",
                unit = "{token}",
                description = "The number of input tokens used per embeddings operation.",
                buckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub embeddings_input_tokens: Option<u64>,

            $($after)*

            /// The kind of tokens counted, attached as `gen_ai.token.modality` to the
            /// draft's usage counters only (`text` unless set).
            #[attribute(
                "gen_ai.token.modality",
                default = "text",
                only(
                    "gen_ai.client.inference.usage.input_tokens",
                    "gen_ai.client.inference.usage.output_tokens",
                    "gen_ai.client.inference.usage.cache_read.input_tokens",
                    "gen_ai.client.inference.usage.cache_write.input_tokens",
                    "gen_ai.client.inference.usage.reasoning.output_tokens"
                )
            )]
            pub token_modality: Option<TokenModality>,
        }
    };
}

genai_set! {
    /// One inference request as a server sees it: `record_inference_metrics` of
    /// Python nemo-lens, plus the rest of the GenAI server vocabulary.
    ///
    /// Every measurement carries `gen_ai.operation.name` (default
    /// `text_completion`), `gen_ai.provider.name` (default `nemo`) and, when set
    /// and not empty, `gen_ai.request.model`, `gen_ai.response.model`,
    /// `server.address` and `server.port`. `error.type` is attached to the request
    /// duration only, as the conventions place it (and, with the draft's names,
    /// to the per-call token histograms). With the fields Python nemo-lens
    /// knows, the exported data is exactly Python's.
    ///
    /// The token fields follow the meter's semantic-convention opt-in
    /// ([`SemconvOptIn`](nemo_lens_core::SemconvOptIn)): `gen_ai.client.token.usage`
    /// by default, the draft's counters and per-call histograms with
    /// `gen_ai_latest_experimental` (`nemo_lens::guides::builtin_sets` lists every name). The
    /// cache and reasoning counts and `token_modality` are recorded with the
    /// draft's names only.
    ///
    /// To time a request rather than fill the fields by hand, use
    /// [`InferenceRequest`](crate::InferenceRequest).
    ///
    /// ```
    /// use nemo_lens::instruments::InferenceMetrics;
    /// use nemo_lens::{Instruments, Meter};
    ///
    /// let meter = Meter::noop();
    /// InferenceMetrics::default()
    ///     .request_duration_s(0.42)
    ///     .model("llama-3-8b")
    ///     .input_tokens(128)
    ///     .output_tokens(256)
    ///     .record(&meter);
    /// ```
    #[derive(Instruments, Default, Debug, Clone)]
    #[instruments(crate = "nemo_lens_core")]
    pub struct InferenceMetrics {
        before {
            /// GenAI server request duration.
            #[histogram(
                "gen_ai.server.request.duration",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
            )]
            pub request_duration_s: Option<f64>,
        }
        after {
            /// Time to generate first token for successful responses.
            #[histogram(
                "gen_ai.server.time_to_first_token",
                unit = "s",
                buckets = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]
            )]
            pub time_to_first_token_s: Option<f64>,

            /// Time per output token generated after the first token for successful responses.
            #[histogram(
                "gen_ai.server.time_per_output_token",
                unit = "s",
                buckets = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
            )]
            pub time_per_output_token_s: Option<f64>,

            /// The model, provider and server, on every measurement.
            #[flatten]
            pub base: GenAiAttributes,

            /// The operation, attached as `gen_ai.operation.name`.
            #[attribute("gen_ai.operation.name", default = "text_completion")]
            pub operation_name: Option<StringValue>,

            /// Why the request failed (`timeout`, `cancelled`, an HTTP status, ...),
            /// attached as `error.type` to the request duration (and, with the
            /// draft's names, to the per-call token histograms) only. By default a
            /// failed request records no output tokens: what it produced is no
            /// response. The draft records them for every call, failed ones
            /// included ([`follow_conventions`](Self::follow_conventions)).
            #[attribute(
                "error.type",
                only(
                    request_duration_s,
                    "gen_ai.client.inference.operation.input_tokens",
                    "gen_ai.client.inference.operation.output_tokens"
                )
            )]
            pub error_type: Option<StringValue>,
        }
    }
}

/// Records `metrics` on `meter`: the Python `record_inference_metrics`.
#[inline]
pub fn record_inference_metrics(meter: &Meter, metrics: &InferenceMetrics) {
    metrics.record(meter);
}

genai_set! {
    /// One call to a model as the calling service sees it (a gym server calling
    /// a policy, an agent calling an LLM): the GenAI client metrics.
    ///
    /// `time_per_output_chunk_s` holds the gaps of the call's stream, one per
    /// chunk after the first, each recorded (a call with N chunks has N - 1);
    /// [`ModelCall`](crate::ModelCall) measures them.
    ///
    /// Every measurement carries `gen_ai.operation.name` (default `chat`),
    /// `gen_ai.provider.name` (default `nemo`) and, when set, the request and
    /// response models, `server.address` and `server.port`; `error.type` goes on
    /// the operation duration only (and, with the draft's names, on the per-call
    /// token histograms). To time a call rather than fill the fields
    /// by hand, use [`ModelCall`](crate::ModelCall).
    ///
    /// ```
    /// use nemo_lens::instruments::ModelCallMetrics;
    /// use nemo_lens::{Instruments, Meter};
    ///
    /// let meter = Meter::noop();
    /// ModelCallMetrics::default()
    ///     .operation_duration_s(1.3)
    ///     .model("policy")
    ///     .input_tokens(900)
    ///     .output_tokens(120)
    ///     .record(&meter);
    /// ```
    #[derive(Instruments, Default, Debug, Clone)]
    #[instruments(crate = "nemo_lens_core")]
    pub struct ModelCallMetrics {
        before {
            /// GenAI operation duration.
            #[histogram(
                "gen_ai.client.operation.duration",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                until_opt_in = "gen_ai_latest_experimental"
            )]
            #[histogram(
                "gen_ai.client.inference.duration",
                unit = "s",
                description = "GenAI client inference operation duration.",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub operation_duration_s: Option<f64>,

            /// Time to receive the first chunk, measured from when the client issues the generation request to when the first chunk is received in the response stream.
            #[histogram(
                "gen_ai.client.operation.time_to_first_chunk",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                until_opt_in = "gen_ai_latest_experimental"
            )]
            #[histogram(
                "gen_ai.client.inference.time_to_first_chunk",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub time_to_first_chunk_s: Option<f64>,

            /// Time per output chunk, recorded for each chunk received after the first one, measured as the time elapsed from the end of the previous chunk to the end of the current chunk.
            #[histogram(
                "gen_ai.client.operation.time_per_output_chunk",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                until_opt_in = "gen_ai_latest_experimental"
            )]
            #[histogram(
                "gen_ai.client.inference.time_per_output_chunk",
                unit = "s",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub time_per_output_chunk_s: Option<Vec<f64>>,

            /// GenAI client embeddings operation duration: where the draft
            /// conventions record an embeddings call's duration, which the guards
            /// move here from `operation_duration_s` under the opt-in.
            #[histogram(
                "gen_ai.client.embeddings.duration",
                unit = "s",
                description = "GenAI client embeddings operation duration.",
                buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
                opt_in = "gen_ai_latest_experimental"
            )]
            pub embeddings_duration_s: Option<f64>,
        }
        after {
            /// The model, provider and server, on every measurement.
            #[flatten]
            pub base: GenAiAttributes,

            /// The operation, attached as `gen_ai.operation.name`.
            #[attribute("gen_ai.operation.name", default = "chat")]
            pub operation_name: Option<StringValue>,

            /// Why the call failed, attached as `error.type` to the operation
            /// duration (and, with the draft's names, to the per-call token
            /// histograms) only.
            #[attribute(
                "error.type",
                only(
                    operation_duration_s,
                    embeddings_duration_s,
                    "gen_ai.client.inference.operation.input_tokens",
                    "gen_ai.client.inference.operation.output_tokens"
                )
            )]
            pub error_type: Option<StringValue>,
        }
    }
}
