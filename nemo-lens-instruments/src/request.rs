//! [`InferenceRequest`]: the server-side guard that times one request.

use std::time::{Duration, Instant};

use nemo_lens_core::slo::Served;
use nemo_lens_core::{Instruments, Meter};
use opentelemetry::StringValue;

use crate::genai::InferenceMetrics;
use crate::guard::{guard_setters, lifecycle, Ended, Guard};
use crate::timing::{Measured, Timing};
use crate::TokenModality;

/// Measures one inference request from arrival to last token, and records
/// the GenAI server metrics when it ends.
///
/// - [`finish`](Self::finish): request duration, time to first token, time
///   per output token and token usage;
/// - [`fail`](Self::fail): request duration with `error.type`, and the
///   input tokens; no output tokens, time to first token or per output
///   token, which the conventions define for successful responses;
/// - dropped without either (the client went away, the task was cancelled,
///   a panic unwound through it): as a failure with `error.type = _OTHER`,
///   recorded once. An empty error type is recorded as `_OTHER` too.
///
/// Time per output token is (end - first token) / (output tokens - 1),
/// recorded when the first token was seen and at least two were produced.
/// Every method that reads the clock has an `_at` twin taking an [`Instant`],
/// for engines that hold their own timestamps and for deterministic tests.
///
/// The guard is `Send` and may be held across `.await`. On a meter that
/// records nothing it reads no clock and records nothing.
///
/// ```
/// use nemo_lens::instruments::InferenceRequest;
/// use nemo_lens::Meter;
///
/// let meter = Meter::noop();
/// let mut req = InferenceRequest::start(&meter).model("llama-3-8b").input_tokens(128);
/// for _token in 0..32 {
///     req.first_token(); // the first call wins
///     req.add_output_tokens(1);
/// }
/// req.finish();
///
/// let req = InferenceRequest::start(&meter).model("llama-3-8b");
/// req.fail("timeout");
/// ```
#[derive(Debug)]
#[must_use = "a request records when it is finished, failed or dropped"]
pub struct InferenceRequest {
    guard: Guard<InferenceMetrics>,
}

lifecycle!(InferenceRequest, InferenceMetrics, "request", "arrived");

impl InferenceRequest {
    guard_setters! {
        /// Sets the requested model (`gen_ai.request.model`).
        model set_model in base: into StringValue;
        /// Sets the serving provider (`gen_ai.provider.name`, default `nemo`).
        provider_name set_provider_name in base: into StringValue;
        /// Sets the operation (`gen_ai.operation.name`, default `text_completion`).
        operation_name set_operation_name: into StringValue;
        /// Sets the model that answered (`gen_ai.response.model`).
        response_model set_response_model in base: into StringValue;
        /// Sets the server's address (`server.address`).
        server_address set_server_address in base: into StringValue;
        /// Sets the server's port (`server.port`).
        server_port set_server_port in base: u16;
        /// Sets the number of prompt tokens.
        input_tokens set_input_tokens: u64;
        /// Sets how many prompt tokens were served from the prefix cache
        /// (recorded with the draft conventions' names only).
        cache_read_input_tokens set_cache_read_input_tokens: u64;
        /// Sets how many prompt tokens were written to the prefix cache
        /// (recorded with the draft conventions' names only).
        cache_write_input_tokens set_cache_write_input_tokens: u64;
        /// Sets how many of the output tokens were reasoning tokens
        /// (recorded with the draft conventions' names only).
        reasoning_output_tokens set_reasoning_output_tokens: u64;
        /// Sets the kind of tokens counted (`gen_ai.token.modality`, default
        /// `text`; on the draft conventions' usage counters only).
        token_modality set_token_modality: TokenModality;
    }

    /// Sets the total number of output tokens, replacing any count so far.
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.guard.timing.set_outputs(tokens);
        self
    }

    /// Sets the total number of output tokens through a borrow, replacing
    /// any count so far.
    pub fn set_output_tokens(&mut self, tokens: u64) -> &mut Self {
        self.guard.timing.set_outputs(tokens);
        self
    }

    /// Notes that the first token was produced now; later calls change
    /// nothing, so it may be called on every token.
    #[inline]
    pub fn first_token(&mut self) {
        self.guard.first();
    }

    /// Notes that the first token was produced at `at`; later calls change
    /// nothing.
    #[inline]
    pub fn first_token_at(&mut self, at: Instant) {
        self.guard.timing.first_at(at);
    }

    /// Notes that the last token was produced at `at`: time per output
    /// token runs from the first token to it, rather than to the end of the
    /// request. What a stream sends after its last token (a usage chunk,
    /// `[DONE]`, a delay before them) is then not decoding; the request's
    /// duration still runs to its end.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use nemo_lens::instruments::InferenceRequest;
    /// use nemo_lens::testing::Capture;
    ///
    /// let capture = Capture::new();
    /// let start = Instant::now();
    /// let mut request = InferenceRequest::start_at(capture.meter(), start).model("llama");
    /// request.first_token_at(start + Duration::from_millis(100));
    /// request.last_token_at(start + Duration::from_millis(190));
    /// request.add_output_tokens(10);
    /// // The usage chunk and [DONE] came 300 ms later.
    /// request.finish_at(start + Duration::from_millis(490));
    /// // 90 ms over the 9 tokens after the first.
    /// let tpot = capture.sum("gen_ai.server.time_per_output_token", &[]).unwrap();
    /// assert!((tpot - 0.010).abs() < 1e-9, "{tpot}");
    /// ```
    #[inline]
    pub fn last_token_at(&mut self, at: Instant) {
        self.guard.timing.last_at(at);
    }

    /// Adds `tokens` streamed output tokens to the count.
    #[inline]
    pub fn add_output_tokens(&mut self, tokens: u64) {
        self.guard.timing.add_outputs(tokens);
    }

    /// Links what the request records (its durations' exemplars) to `span`,
    /// when no sampled span was current when it started: a layer that runs
    /// outside the one entering the request's span learns the span later,
    /// where the handler runs. A span current at the start wins.
    ///
    /// ```
    /// use nemo_lens::exemplar::SpanIds;
    /// use nemo_lens::instruments::InferenceRequest;
    /// use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
    /// use nemo_lens::testing::Capture;
    ///
    /// let capture = Capture::new();
    /// let mut request = InferenceRequest::start(capture.meter()).model("llama");
    /// request.link_span(SpanIds::new(TraceId::from(0xa1_u128), SpanId::from(0xb2_u64)));
    /// request.finish();
    /// let exemplars = capture.exemplars("gen_ai.server.request.duration", &[]);
    /// assert_eq!(exemplars[0].trace_id_hex().unwrap(), format!("{:032x}", 0xa1));
    /// ```
    pub fn link_span(&mut self, span: nemo_lens_core::exemplar::SpanIds) {
        self.guard.link_span(span);
    }
}

impl Ended for InferenceMetrics {
    fn ended(&mut self, meter: &Meter, measured: Measured, error_type: Option<StringValue>) {
        if meter.objectives().is_some() {
            let served = match error_type {
                Some(_) => Served::failed(),
                None => served(&measured),
            };
            crate::goodput::judge(meter, self.base.model.as_ref(), &served);
        }
        self.request_duration_s = Some(measured.duration_s);
        // A failed request records its duration and the prompt it was given;
        // what it produced is not a response, so neither are its timings nor,
        // by default, its token counts (reasoning tokens included). The
        // draft counts a failed call's tokens too (follow_conventions).
        if error_type.is_none() {
            self.output_tokens = measured.outputs;
            self.time_to_first_token_s = measured.to_first_s;
            self.time_per_output_token_s = measured.per_output_s;
        } else if crate::genai::Draft::of(meter) == Some(crate::genai::Draft::Alone) {
            self.output_tokens = measured.outputs;
        } else {
            self.reasoning_output_tokens = None;
        }
        self.error_type = error_type;
        self.follow_conventions(meter);
        self.record(meter);
    }

    fn prepare(&mut self, timing: &mut Timing) {
        // The guard counts outputs as they stream: a prepared count is
        // where it starts.
        if let Some(outputs) = self.output_tokens.take() {
            timing.set_outputs(outputs);
        }
    }
}

/// What a request that completed measured, for its verdict.
fn served(measured: &Measured) -> Served {
    let mut served = Served::ok(Duration::from_secs_f64(measured.to_last_s));
    if let Some(ttft) = measured.to_first_s {
        served = served.time_to_first_token(Duration::from_secs_f64(ttft));
    }
    if let Some(outputs) = measured.outputs {
        served = served.output_tokens(outputs);
    }
    served
}
