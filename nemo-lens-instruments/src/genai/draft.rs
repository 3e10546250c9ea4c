//! What the draft conventions (semantic-conventions-genai, the
//! `gen_ai_latest_experimental` opt-in) change beyond names: which
//! instruments an operation records on and what a call without usage
//! records. The guards apply it when a call ends; a set filled by hand
//! applies it with `follow_conventions`.
//!
//! `gen_ai_latest_experimental/dup` records both conventions' names so that
//! the old dashboards keep their numbers while the new ones are built
//! beside them; one field feeds both, so there the draft's rules go only as
//! far as they leave the old names' numbers alone: an embeddings call is
//! copied to its own metrics (and stays on the inference ones), and a
//! call's missing token counts are not made 0.

use nemo_lens_core::{Meter, GEN_AI_LATEST_EXPERIMENTAL};
use opentelemetry::StringValue;

use super::{InferenceMetrics, ModelCallMetrics};
use crate::TokenModality;

/// The draft conventions' `gen_ai.operation.name` for fetching a response
/// generated earlier, by its id, without inference (OpenAI's
/// `GET /v1/responses/{id}`): it "SHOULD NOT report token usage".
pub const FETCH_RESPONSE: &str = "fetch_response";

/// The `gen_ai.operation.name` of an embeddings call, which the draft
/// conventions record on `gen_ai.client.embeddings.duration` and
/// `gen_ai.client.embeddings.operation.input_tokens` instead of the
/// inference metrics.
pub const EMBEDDINGS: &str = "embeddings";

/// The draft's inference operations, whose token metrics are recorded for
/// every call, failed ones included.
const INFERENCE: [&str; 3] = ["chat", "text_completion", "generate_content"];

/// The token fields of a GenAI set, borrowed for the draft's rules.
macro_rules! tokens {
    ($set:expr) => {
        Tokens {
            input: &mut $set.input_tokens,
            output: &mut $set.output_tokens,
            cache_read: &mut $set.cache_read_input_tokens,
            cache_write: &mut $set.cache_write_input_tokens,
            reasoning: &mut $set.reasoning_output_tokens,
            modality: &mut $set.token_modality,
            embeddings_input: &mut $set.embeddings_input_tokens,
        }
    };
}

impl InferenceMetrics {
    /// Applies what the meter's conventions say beyond names, as
    /// [`InferenceRequest`](crate::InferenceRequest) does when it ends; for a
    /// set filled by hand, call it before [`record`](nemo_lens_core::Instruments::record).
    ///
    /// Under `gen_ai_latest_experimental`:
    /// - an `embeddings` request's input tokens move to
    ///   `embeddings_input_tokens` (`gen_ai.client.embeddings.operation.input_tokens`),
    ///   and it records no inference token metric;
    /// - a [`FETCH_RESPONSE`] records no token metric;
    /// - an inference operation (`chat`, `text_completion`, `generate_content`)
    ///   records its input and output tokens even when it failed, `0` for a
    ///   count it lacks, and a call without any usage records `0` on every
    ///   usage counter with `gen_ai.token.modality = unknown`.
    ///
    /// With `gen_ai_latest_experimental/dup`, where one field feeds the old
    /// names too, an embeddings request's tokens are copied rather than
    /// moved and missing counts are not made 0, so the old names' numbers
    /// stay as they were; a fetched response still records no token.
    /// Without the opt-in nothing changes.
    ///
    /// ```
    /// use nemo_lens::instruments::InferenceMetrics;
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::{Instruments, SemconvOptIn};
    ///
    /// let capture = Capture::new();
    /// let meter = capture
    ///     .meter()
    ///     .with_semconv_opt_in(SemconvOptIn::parse("gen_ai_latest_experimental"));
    /// let mut request = InferenceMetrics::default()
    ///     .operation_name("embeddings")
    ///     .input_tokens(12);
    /// request.follow_conventions(&meter);
    /// request.record(&meter);
    /// let input = "gen_ai.client.embeddings.operation.input_tokens";
    /// assert_eq!(capture.sum(input, &[]), Some(12.0));
    /// assert_eq!(capture.sum("gen_ai.client.inference.usage.input_tokens", &[]), None);
    /// ```
    pub fn follow_conventions(&mut self, meter: &Meter) {
        let Some(draft) = Draft::of(meter) else {
            return;
        };
        let operation = Operation::of(self.operation_name.as_ref(), "text_completion");
        tokens!(self).follow(draft, operation);
    }
}

impl ModelCallMetrics {
    /// Applies what the meter's conventions say beyond names, as
    /// [`ModelCall`](crate::ModelCall) does when it ends; for a set filled by
    /// hand, call it before [`record`](nemo_lens_core::Instruments::record). The rules are
    /// [`InferenceMetrics::follow_conventions`]'s, and an `embeddings` call's
    /// duration moves to `embeddings_duration_s`
    /// (`gen_ai.client.embeddings.duration`), its chunk timings dropped
    /// (with `/dup`, the duration is copied and the timings kept).
    ///
    /// ```
    /// use nemo_lens::instruments::ModelCallMetrics;
    /// use nemo_lens::testing::Capture;
    /// use nemo_lens::{Instruments, SemconvOptIn};
    ///
    /// let capture = Capture::new();
    /// let meter = capture
    ///     .meter()
    ///     .with_semconv_opt_in(SemconvOptIn::parse("gen_ai_latest_experimental"));
    /// let mut call = ModelCallMetrics::default()
    ///     .operation_duration_s(0.25)
    ///     .error_type("timeout");
    /// call.follow_conventions(&meter);
    /// call.record(&meter);
    /// // No usage arrived: 0, with the modality unknown.
    /// let output = "gen_ai.client.inference.usage.output_tokens";
    /// assert_eq!(capture.sum(output, &[("gen_ai.token.modality", "unknown")]), Some(0.0));
    /// ```
    pub fn follow_conventions(&mut self, meter: &Meter) {
        let Some(draft) = Draft::of(meter) else {
            return;
        };
        let operation = Operation::of(self.operation_name.as_ref(), "chat");
        if operation == Operation::Embeddings {
            match draft {
                Draft::Alone => {
                    if let Some(duration) = self.operation_duration_s.take() {
                        self.embeddings_duration_s = Some(duration);
                    }
                    self.time_to_first_chunk_s = None;
                    self.time_per_output_chunk_s = None;
                }
                Draft::BesideStable => self.embeddings_duration_s = self.operation_duration_s,
            }
        }
        tokens!(self).follow(draft, operation);
    }
}

/// How far a meter follows the draft's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Draft {
    /// `gen_ai_latest_experimental`: all of them.
    Alone,
    /// `gen_ai_latest_experimental/dup`: those that leave the stable names'
    /// numbers as they were.
    BesideStable,
}

impl Draft {
    /// The draft's rules `meter` follows; `None` without the opt-in.
    pub(crate) fn of(meter: &Meter) -> Option<Draft> {
        let opt_in = meter.semconv_opt_in();
        if !opt_in.records_new(GEN_AI_LATEST_EXPERIMENTAL) {
            return None;
        }
        Some(match opt_in.records_old(GEN_AI_LATEST_EXPERIMENTAL) {
            true => Draft::BesideStable,
            false => Draft::Alone,
        })
    }
}

/// What the draft makes of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// Chat, text completion, content generation: token metrics always.
    Inference,
    /// Its own duration and input-token metrics.
    Embeddings,
    /// A fetched response: no token metrics at all.
    Fetch,
    /// Anything else (an agent, a tool, a name of the user's): as set.
    Other,
}

impl Operation {
    /// The operation named `name`, or `default` when unset.
    pub(crate) fn of(name: Option<&StringValue>, default: &str) -> Self {
        match name.map_or(default, StringValue::as_str) {
            EMBEDDINGS => Self::Embeddings,
            FETCH_RESPONSE => Self::Fetch,
            op if INFERENCE.contains(&op) => Self::Inference,
            _ => Self::Other,
        }
    }
}

/// The token fields both GenAI sets have, borrowed from one of them.
pub(crate) struct Tokens<'a> {
    pub(crate) input: &'a mut Option<u64>,
    pub(crate) output: &'a mut Option<u64>,
    pub(crate) cache_read: &'a mut Option<u64>,
    pub(crate) cache_write: &'a mut Option<u64>,
    pub(crate) reasoning: &'a mut Option<u64>,
    pub(crate) modality: &'a mut Option<TokenModality>,
    pub(crate) embeddings_input: &'a mut Option<u64>,
}

impl Tokens<'_> {
    /// Moves, copies, clears or completes the counts as `draft` says for
    /// `operation`.
    pub(crate) fn follow(mut self, draft: Draft, operation: Operation) {
        match (operation, draft) {
            (Operation::Fetch, _) => {
                self.clear_inference();
                *self.embeddings_input = None;
            }
            // "Embeddings token usage previously reported on
            // gen_ai.client.token.usage is now reported on
            // gen_ai.client.embeddings.operation.input_tokens".
            (Operation::Embeddings, Draft::Alone) => {
                if let Some(input) = self.input.take() {
                    *self.embeddings_input = Some(input);
                }
                self.clear_inference();
            }
            (Operation::Embeddings, Draft::BesideStable) => {
                if self.input.is_some() {
                    *self.embeddings_input = *self.input;
                }
            }
            (Operation::Inference, Draft::Alone) => self.complete(),
            (Operation::Inference | Operation::Other, _) => {}
        }
    }

    fn clear_inference(&mut self) {
        *self.input = None;
        *self.output = None;
        *self.cache_read = None;
        *self.cache_write = None;
        *self.reasoning = None;
    }

    /// PR #536: the token histograms and usage counters are recorded "for
    /// every inference operation, including failed ones, ... and `0` when
    /// no usage was received", the `0` of a call without usage "with
    /// `gen_ai.token.modality` set to `unknown`". A call with usage but
    /// without a cache or reasoning count does not claim a 0 for it: the
    /// provider did not say.
    fn complete(&mut self) {
        let no_usage = [
            &*self.input,
            &*self.output,
            &*self.cache_read,
            &*self.cache_write,
            &*self.reasoning,
        ]
        .iter()
        .all(|count| count.is_none());
        if no_usage {
            self.modality.get_or_insert(TokenModality::Unknown);
            *self.cache_read = Some(0);
            *self.cache_write = Some(0);
            *self.reasoning = Some(0);
        }
        self.input.get_or_insert(0);
        self.output.get_or_insert(0);
    }
}
