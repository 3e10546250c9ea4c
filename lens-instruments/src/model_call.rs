//! [`ModelCall`]: the client-side guard that times one call to a model.

use std::time::Instant;

use lens_core::Meter;
use opentelemetry::StringValue;

use crate::genai::ModelCallMetrics;
use crate::guard::{guard_setters, Ended, Guard};
use crate::timing::Measured;

/// Measures one call to a model from the caller's side (a gym server calling
/// a policy, an agent calling an LLM) and records the GenAI client metrics
/// when it ends: operation duration, time to first chunk and per output
/// chunk (streaming calls), token usage, and `error.type` on failure.
///
/// It ends like [`InferenceRequest`](crate::InferenceRequest): exactly one
/// of [`finish`](Self::finish), [`fail`](Self::fail), or a drop (recorded
/// with `error.type = _OTHER`). Time per output chunk is (end - first chunk)
/// / (chunks - 1), recorded when at least two chunks arrived.
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

impl ModelCall {
    /// Starts measuring a call now.
    pub fn start(meter: &Meter) -> Self {
        let now = meter.is_enabled().then(Instant::now);
        ModelCall {
            guard: Guard::start(meter, now),
        }
    }

    /// Starts measuring a call that was sent at `at`.
    pub fn start_at(meter: &Meter, at: Instant) -> Self {
        ModelCall {
            guard: Guard::start(meter, Some(at)),
        }
    }

    guard_setters! {
        /// Sets the requested model (`gen_ai.request.model`).
        model: into StringValue;
        /// Sets the model provider (`gen_ai.provider.name`, default `nemo`).
        provider_name: into StringValue;
        /// Sets the operation (`gen_ai.operation.name`, default `chat`).
        operation_name: into StringValue;
        /// Sets the model that answered (`gen_ai.response.model`).
        response_model: into StringValue;
        /// Sets the address called (`server.address`).
        server_address: into StringValue;
        /// Sets the port called (`server.port`).
        server_port: u16;
        /// Sets the number of prompt tokens.
        input_tokens: u64;
        /// Sets the number of output tokens, as the response reports them.
        output_tokens: u64;
    }

    /// Notes that a chunk of the response arrived now; the first one sets
    /// the time to first chunk.
    #[inline]
    pub fn chunk(&mut self) {
        self.guard.first();
        self.guard.timing.add_outputs(1);
    }

    /// Notes that a chunk arrived at `at`.
    #[inline]
    pub fn chunk_at(&mut self, at: Instant) {
        self.guard.timing.first_at(at);
        self.guard.timing.add_outputs(1);
    }

    /// Ends the call successfully now.
    pub fn finish(self) {
        let now = self.guard.now();
        self.guard.end(now, None);
    }

    /// Ends the call successfully at `at`.
    pub fn finish_at(self, at: Instant) {
        self.guard.end(Some(at), None);
    }

    /// Ends the call now as failed with `error_type`: the operation duration
    /// with `error.type`, and the token counts that were set (a provider
    /// may bill a failed call); no chunk timings.
    pub fn fail(self, error_type: impl Into<StringValue>) {
        let now = self.guard.now();
        self.guard.end(now, Some(error_type.into()));
    }

    /// Ends the call at `at` as failed with `error_type`.
    pub fn fail_at(self, error_type: impl Into<StringValue>, at: Instant) {
        self.guard.end(Some(at), Some(error_type.into()));
    }
}

impl Ended for ModelCallMetrics {
    fn ended(&mut self, measured: Measured, error_type: Option<StringValue>) {
        self.operation_duration_s = Some(measured.duration_s);
        if error_type.is_none() {
            self.time_to_first_chunk_s = measured.to_first_s;
            self.time_per_output_chunk_s = measured.per_output_s;
        }
        self.error_type = error_type;
    }
}
