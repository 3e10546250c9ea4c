//! [`ModelCall`]: the client-side guard that times one call to a model.

use std::time::Instant;

use nemo_lens_core::{Instruments, Meter};
use opentelemetry::StringValue;

use crate::genai::ModelCallMetrics;
use crate::guard::{guard_setters, lifecycle, Ended, Guard};
use crate::timing::Measured;
use crate::TokenModality;

/// Measures one call to a model from the caller's side (a gym server calling
/// a policy, an agent calling an LLM) and records the GenAI client metrics
/// when it ends: operation duration, time to first chunk and per output
/// chunk (streaming calls), token usage, and `error.type` on failure.
///
/// It ends like [`InferenceRequest`](crate::InferenceRequest): exactly one
/// of [`finish`](Self::finish), [`fail`](Self::fail), or a drop (recorded
/// with `error.type = _OTHER`).
///
/// Time per output chunk follows the conventions' definition: "recorded for
/// each chunk received after the first one, measured as the time elapsed
/// from the end of the previous chunk to the end of the current chunk". A
/// call with N chunks records N - 1 values, so a stall inside a stream shows
/// in the histogram as the gap it was, not averaged away: chunks at +10,
/// +30 and +100 ms record 0.020 s and 0.070 s. The gaps are kept by the
/// guard (8 bytes a chunk) and recorded when the call finishes, with the
/// attributes the call ends with (`response_model` set mid-stream included).
///
/// A failed call records its operation duration with `error.type` and the
/// token counts that were set (a provider may bill a failed call); under the
/// draft conventions, its token histograms carry `error.type` too and a count
/// not set records `0`
/// ([`ModelCallMetrics::follow_conventions`](crate::ModelCallMetrics::follow_conventions)).
///
/// A call that fails or is dropped records no chunk timings: neither its
/// time to first chunk nor the gaps of the chunks it did receive. Like the
/// server's time to first token, they describe streams that completed; the
/// failure shows as the duration with `error.type`, and the stall that ended
/// in a timeout is in that duration, since it never ended in a chunk.
///
/// ```
/// use nemo_lens::instruments::ModelCall;
/// use nemo_lens::Meter;
///
/// let meter = Meter::noop();
/// let mut call = ModelCall::start(&meter).model("policy").server_address("127.0.0.1").server_port(8000);
/// for _chunk in 0..8 {
///     call.chunk(); // the first one sets the time to first chunk
/// }
/// call.input_tokens(900).output_tokens(64).finish();
/// ```
#[derive(Debug)]
#[must_use = "a call records when it is finished, failed or dropped"]
pub struct ModelCall {
    guard: Guard<ModelCallMetrics>,
}

lifecycle!(ModelCall, ModelCallMetrics, "call", "was sent");

impl ModelCall {
    guard_setters! {
        /// Sets the requested model (`gen_ai.request.model`).
        model set_model in base: into StringValue;
        /// Sets the model provider (`gen_ai.provider.name`, default `nemo`).
        provider_name set_provider_name in base: into StringValue;
        /// Sets the operation (`gen_ai.operation.name`, default `chat`).
        operation_name set_operation_name: into StringValue;
        /// Sets the model that answered (`gen_ai.response.model`).
        response_model set_response_model in base: into StringValue;
        /// Sets the address called (`server.address`).
        server_address set_server_address in base: into StringValue;
        /// Sets the port called (`server.port`).
        server_port set_server_port in base: u16;
        /// Sets the number of prompt tokens.
        input_tokens set_input_tokens: u64;
        /// Sets the number of output tokens, as the response reports them.
        output_tokens set_output_tokens: u64;
        /// Sets how many of the input tokens were read from the provider's
        /// cache (recorded with the draft conventions' names only).
        cache_read_input_tokens set_cache_read_input_tokens: u64;
        /// Sets how many of the input tokens were written to the provider's
        /// cache (recorded with the draft conventions' names only).
        cache_write_input_tokens set_cache_write_input_tokens: u64;
        /// Sets how many of the output tokens were reasoning tokens
        /// (recorded with the draft conventions' names only).
        reasoning_output_tokens set_reasoning_output_tokens: u64;
        /// Sets the kind of tokens counted (`gen_ai.token.modality`, default
        /// `text`; on the draft conventions' usage counters only).
        token_modality set_token_modality: TokenModality;
    }

    /// Notes that a chunk of the response arrived now: the first one sets the
    /// time to first chunk, each later one a gap since the one before.
    #[inline]
    pub fn chunk(&mut self) {
        if let Some(now) = self.guard.now() {
            self.guard.timing.output_at(now);
        }
    }

    /// Notes that a chunk arrived at `at`.
    #[inline]
    pub fn chunk_at(&mut self, at: Instant) {
        self.guard.timing.output_at(at);
    }
}

impl Ended for ModelCallMetrics {
    fn ended(&mut self, meter: &Meter, measured: Measured, error_type: Option<StringValue>) {
        self.operation_duration_s = Some(measured.duration_s);
        if error_type.is_none() {
            self.time_to_first_chunk_s = measured.to_first_s;
            self.time_per_output_chunk_s = (!measured.gaps.is_empty()).then_some(measured.gaps);
        }
        self.error_type = error_type;
        self.follow_conventions(meter);
        self.record(meter);
    }
}
