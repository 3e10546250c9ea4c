//! One request's recording: what the response showed as it passed, and
//! what is recorded when it ends.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::response::Parts;
use nemo_lens_core::exemplar::SpanIds;
use nemo_lens_core::Instruments;
use nemo_lens_instruments::serving::{FinishReason, SchedulingMetrics};
use nemo_lens_instruments::InferenceRequest;
use opentelemetry::StringValue;

use crate::chunk::{glance, Glance, Layout};
use crate::config::Config;
use crate::json::{Field, Found, JsonScan, Sink};
use crate::sse::SseSplit;
use crate::{messages, responses};

/// `error.type` of a response whose client went away before its end.
pub const CANCELLED: &str = "cancelled";
/// `error.type` of a response that reported an `error` (a stream's error
/// event, or an error in a successful status's body).
pub const ERROR_EVENT: &str = "error_event";
/// `error.type` of a response body that failed while being produced.
pub const BODY_ERROR: &str = "body_error";

/// The operation of a measured path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// `.../chat/completions`.
    Chat,
    /// `.../completions`.
    TextCompletion,
    /// `.../responses`: OpenAI's Responses API.
    Responses,
    /// `.../messages`: Anthropic's Messages API.
    Messages,
    /// `.../embeddings`.
    Embeddings,
}

impl Operation {
    /// The operation of `POST path`, if the layer measures it.
    pub(crate) fn of(method: &http::Method, path: &str) -> Option<Operation> {
        if method != http::Method::POST {
            return None;
        }
        let path = path.trim_end_matches('/');
        if path.ends_with("/chat/completions") {
            Some(Operation::Chat)
        } else if path.ends_with("/completions") {
            Some(Operation::TextCompletion)
        } else if path.ends_with("/responses") {
            Some(Operation::Responses)
        } else if path.ends_with("/messages") && !path.contains("/threads/") {
            // Not the Assistants API's `threads/{id}/messages`, which
            // stores a message and generates nothing.
            Some(Operation::Messages)
        } else if path.ends_with("/embeddings") {
            Some(Operation::Embeddings)
        } else {
            None
        }
    }

    /// `gen_ai.operation.name`, from the well-known values of the GenAI
    /// conventions (semantic-conventions v1.41.1): a Responses or Messages
    /// request is a chat (its Anthropic and OpenAI pages name no other
    /// operation for generating a reply to messages).
    fn name(self) -> &'static str {
        match self {
            Operation::Chat | Operation::Responses | Operation::Messages => "chat",
            Operation::TextCompletion => "text_completion",
            Operation::Embeddings => "embeddings",
        }
    }

    /// How a stream's events are glanced at; `first`: no content came
    /// before this one.
    fn glance<'a>(self, event: &'a [u8], layout: &mut Layout, first: bool) -> Glance<'a> {
        match self {
            Operation::Chat | Operation::TextCompletion => glance(event, layout, first),
            Operation::Responses => responses::glance(event, layout),
            Operation::Messages => messages::glance(event, layout),
            // Never streamed: every event is read whole.
            Operation::Embeddings => Glance::More,
        }
    }
}

/// What the request body's reading and the request's recording share: the
/// body goes to the handler, the recording with the response, and both
/// hold this (one allocation a request, and one count on the layer's
/// shared configuration, which both worker threads would otherwise bounce
/// between them for each holder).
#[derive(Debug)]
pub(crate) struct FromRequest {
    pub(crate) config: Arc<Config>,
    /// The request body's `model`, found by its scan and read when the
    /// response ends: 0 while unknown, else 1 + the index of its attribute
    /// value among the declared models, or [`UNDECLARED`].
    model: AtomicU32,
    /// The request's span, as the request body first saw it current: where
    /// the handler runs, inside a tracing layer added inside this one.
    pub(crate) span: OnceLock<SpanIds>,
}

const UNDECLARED: u32 = u32::MAX;

impl FromRequest {
    pub(crate) fn new(config: Arc<Config>) -> Arc<Self> {
        Arc::new(FromRequest {
            config,
            model: AtomicU32::new(0),
            span: OnceLock::new(),
        })
    }

    /// Stores the attribute of the request's `model`, as `written`.
    pub(crate) fn store_model(&self, written: &[u8]) {
        let index = self
            .config
            .model_index(written)
            .map_or(UNDECLARED, |i| i as u32 + 1);
        self.model.store(index, Ordering::Relaxed);
    }
}

/// How the response body is read.
///
/// The scanner is held inline (128 bytes): the
/// [`Recording`] stays within glibc's per-thread cache
/// (`recording_fits_the_allocator_s_thread_cache`) with one allocation a
/// request.
#[derive(Debug)]
enum Mode {
    /// `text/event-stream`: event by event.
    Stream {
        split: SseSplit,
        scan: JsonScan,
        layout: Layout,
    },
    /// JSON: one document.
    Document(JsonScan),
    /// Anything else, or compressed: timed, not read.
    Opaque,
}

/// What the response showed so far.
#[derive(Debug, Default)]
struct Seen {
    response_model: Option<StringValue>,
    first_content: Option<Instant>,
    /// When the latest piece of the body with content arrived: decoding
    /// ends there, not at a trailing usage chunk or `[DONE]`.
    last_content: Option<Instant>,
    /// Stream chunks that carried content.
    content_chunks: u64,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    finish_reason: Option<FinishReason>,
    error_event: bool,
    /// Whether the chunk being read carries content.
    chunk_content: bool,
}

/// [`Seen`] as the scanner's sink, with the models to resolve against.
struct Reader<'a> {
    seen: &'a mut Seen,
    config: &'a Config,
}

impl Sink for Reader<'_> {
    fn found(&mut self, field: Field, value: Found<'_>) {
        let seen = &mut *self.seen;
        match (field, value) {
            (Field::Model, Found::Str { bytes, .. }) if seen.response_model.is_none() => {
                seen.response_model = Some(self.config.model(bytes));
            }
            (Field::Content, Found::Str { empty: false, .. }) => seen.chunk_content = true,
            (Field::PromptTokens, Found::Number(n)) => seen.prompt_tokens = Some(n),
            (Field::CompletionTokens, Found::Number(n)) => seen.completion_tokens = Some(n),
            (Field::CachedTokens, Found::Number(n)) => seen.cached_tokens = Some(n),
            (Field::CacheWriteTokens, Found::Number(n)) => seen.cache_write_tokens = Some(n),
            (Field::ReasoningTokens, Found::Number(n)) => seen.reasoning_tokens = Some(n),
            (Field::FinishReason, Found::Str { bytes, .. }) => {
                seen.finish_reason = finish_reason(bytes).or(seen.finish_reason);
            }
            (Field::Error, Found::Null) => {}
            (Field::Error, _) => seen.error_event = true,
            (Field::EventType, Found::Str { bytes, .. }) if responses::is_error_event(bytes) => {
                seen.error_event = true
            }
            _ => {}
        }
    }
}

/// OpenAI's finish reasons, a Responses object's `status` and Anthropic's
/// stop reasons as the engine's: the ones that end a generation normally
/// are stops; a response cut at its token limit (`incomplete`,
/// `max_tokens`) is a length. A status still in progress says nothing.
fn finish_reason(written: &[u8]) -> Option<FinishReason> {
    match written {
        b"stop" | b"tool_calls" | b"function_call" | b"content_filter" => Some(FinishReason::Stop),
        b"completed" | b"end_turn" | b"stop_sequence" | b"tool_use" | b"pause_turn"
        | b"refusal" => Some(FinishReason::Stop),
        b"length" | b"incomplete" | b"max_tokens" => Some(FinishReason::Length),
        b"abort" | b"cancelled" => Some(FinishReason::Abort),
        b"error" | b"failed" => Some(FinishReason::Error),
        _ => None,
    }
}

/// One measured request, from its arrival to the end of its response.
/// Dropped before [`end`](Self::end) (the client went away while the
/// handler ran), it records the request as cancelled.
#[derive(Debug)]
pub(crate) struct Recording {
    operation: Operation,
    request: Option<InferenceRequest>,
    from_request: Arc<FromRequest>,
    mode: Mode,
    /// The error status, as `error.type`.
    status_error: Option<StringValue>,
    seen: Seen,
}

impl Recording {
    /// Starts timing a request to `operation` now.
    ///
    /// Boxed: the response future and then the body carry it, and each
    /// hand-over would otherwise copy all of it (928 bytes: the request's
    /// record and the response's scanner), fifteen cache lines read and
    /// written a time, for a pointer.
    pub(crate) fn start(operation: Operation, from_request: Arc<FromRequest>) -> Box<Self> {
        let config = &*from_request.config;
        let mut request = InferenceRequest::start(&config.meter);
        request
            .set_operation_name(operation.name())
            .set_provider_name(config.provider_name.clone())
            .set_token_modality(config.token_modality);
        if let Some(address) = &config.server_address {
            request.set_server_address(address.clone());
        }
        if let Some(port) = config.server_port {
            request.set_server_port(port);
        }
        Box::new(Recording {
            operation,
            request: Some(request),
            from_request,
            mode: Mode::Opaque,
            status_error: None,
            seen: Seen::default(),
        })
    }

    /// Reads the response's head: its status, and how to read its body.
    pub(crate) fn response(&mut self, head: &Parts) {
        if head.status.is_client_error() || head.status.is_server_error() {
            self.status_error = Some(StringValue::from(head.status.as_str().to_owned()));
        }
        let encoded = head
            .headers
            .get(CONTENT_ENCODING)
            .is_some_and(|e| e.as_bytes() != b"identity");
        // Media types are case-insensitive: compared as such, not lowered
        // into a new string.
        let media = head
            .headers
            .get(CONTENT_TYPE)
            .map(|t| t.as_bytes())
            .and_then(|t| t.split(|&b| b == b';').next())
            .map(<[u8]>::trim_ascii);
        let is = |t: &[u8], name: &[u8]| t.eq_ignore_ascii_case(name);
        self.mode = match media {
            _ if encoded => Mode::Opaque,
            Some(t) if is(t, b"text/event-stream") => Mode::Stream {
                split: SseSplit::default(),
                scan: JsonScan::default(),
                layout: Layout::default(),
            },
            Some(t)
                if is(t, b"application/json") || t.len() > 5 && is(&t[t.len() - 5..], b"+json") =>
            {
                Mode::Document(JsonScan::default())
            }
            _ => Mode::Opaque,
        };
    }

    /// Stops reading the body: what follows cannot be read (it came in a
    /// form the readers do not follow); the request is still timed.
    pub(crate) fn stop_reading(&mut self) {
        self.mode = Mode::Opaque;
    }

    /// Reads the next piece of the response body.
    pub(crate) fn data(&mut self, bytes: &[u8]) {
        let config = &*self.from_request.config;
        let operation = self.operation;
        let seen = &mut self.seen;
        match &mut self.mode {
            Mode::Stream {
                split,
                scan,
                layout,
            } => {
                let before = seen.content_chunks;
                split.feed(bytes, &mut |event| {
                    read_event(
                        operation,
                        event,
                        scan,
                        layout,
                        &mut Reader {
                            seen: &mut *seen,
                            config,
                        },
                    )
                });
                // One clock read per piece of the body that had content,
                // not per chunk: the first content's time too.
                if seen.content_chunks != before {
                    let now = Instant::now();
                    seen.first_content.get_or_insert(now);
                    seen.last_content = Some(now);
                }
            }
            Mode::Document(scan) => scan.feed(bytes, &mut Reader { seen, config }),
            Mode::Opaque => {}
        }
    }

    /// The response ended: records the request, a success unless its
    /// status or its events said otherwise.
    pub(crate) fn end(mut self: Box<Self>) {
        let error = self.status_error.take().or_else(|| {
            self.seen
                .error_event
                .then(|| StringValue::from(ERROR_EVENT))
        });
        self.record(error);
    }

    /// The response failed with `error_type`.
    pub(crate) fn fail(mut self: Box<Self>, error_type: &'static str) {
        self.record(Some(StringValue::from(error_type)));
    }

    fn record(&mut self, error: Option<StringValue>) {
        // Set in place, and taken out only to end: a builder chain would
        // move the request's record (480 bytes) at every call not inlined.
        let Some(request) = self.request.as_mut() else {
            return;
        };
        // The handler has run: a span it ran in (a tracing layer inside this
        // one) is the request's, for the exemplars of what it records. Read
        // here rather than at the response's head, where the request's
        // shared state has gone cold among other requests' work: this end
        // reads it for the model anyway.
        if let Some(span) = self.from_request.span.get() {
            request.link_span(*span);
        }
        let now = Instant::now();
        let seen = &self.seen;
        let model = match self.from_request.model.load(Ordering::Relaxed) {
            0 => None,
            UNDECLARED => Some(StringValue::from(crate::UNDECLARED_MODEL)),
            i => self.from_request.config.models.get(i as usize - 1).cloned(),
        };
        if let Some(model) = model {
            request.set_model(model);
        }
        if let Some(model) = seen.response_model.clone() {
            request.set_response_model(model);
        }
        let input = match self.operation {
            Operation::Messages => messages::input_tokens(
                seen.prompt_tokens,
                seen.cached_tokens,
                seen.cache_write_tokens,
            ),
            _ => seen.prompt_tokens,
        };
        if let Some(tokens) = input {
            request.set_input_tokens(tokens);
        }
        if let Some(tokens) = seen.cached_tokens {
            request.set_cache_read_input_tokens(tokens);
        }
        if let Some(tokens) = seen.cache_write_tokens {
            request.set_cache_write_input_tokens(tokens);
        }
        if let Some(tokens) = seen.reasoning_tokens {
            request.set_reasoning_output_tokens(tokens);
        }
        let finished = match &error {
            Some(e) if e.as_str() == CANCELLED => FinishReason::Abort,
            Some(_) => FinishReason::Error,
            None => seen.finish_reason.unwrap_or(FinishReason::Stop),
        };
        if error.is_none() {
            if let Some(first) = seen.first_content {
                request.first_token_at(first);
            }
            if let Some(last) = seen.last_content {
                request.last_token_at(last);
            }
            let outputs = match (self.operation, &self.mode) {
                // An embedding generates no tokens.
                (Operation::Embeddings, _) => None,
                (_, Mode::Stream { .. }) => seen.completion_tokens.or(Some(seen.content_chunks)),
                _ => seen.completion_tokens,
            };
            if let Some(outputs) = outputs {
                request.set_output_tokens(outputs);
            }
        }
        if let Some(request) = self.request.take() {
            match error {
                Some(error) => request.fail_at(error, now),
                None => request.finish_at(now),
            }
        }
        let config = &*self.from_request.config;
        if config.count_finished {
            SchedulingMetrics::default()
                .finished(1)
                .finish_reason(finished)
                .record(&config.meter);
        }
    }
}

impl Drop for Recording {
    /// Dropped before its end: the client went away (the response future or
    /// body was dropped), or a panic unwound through the handler.
    fn drop(&mut self) {
        let error = if std::thread::panicking() {
            nemo_lens_instruments::DROPPED_ERROR_TYPE
        } else {
            CANCELLED
        };
        self.record(Some(StringValue::from(error)));
    }
}

/// One event of a stream: `[DONE]`, or a chunk, read whole only when it
/// may carry more than a glance finds.
fn read_event(
    operation: Operation,
    event: &[u8],
    scan: &mut JsonScan,
    layout: &mut Layout,
    reader: &mut Reader<'_>,
) {
    if event == b"[DONE]" || glanced(operation, event, layout, reader) {
        return;
    }
    reader.seen.chunk_content = false;
    scan.reset();
    scan.feed(event, reader);
    scan.finish(reader);
    if reader.seen.chunk_content {
        reader.seen.content_chunks += 1;
    }
}

/// Reads what a glance finds of `event`: `false` when it must be read
/// whole. Until the first content, while the response's model is unknown,
/// a chat or completions chunk must also name it plainly (each names it; a
/// stream whose chunks do not is read whole until its first words, where
/// the scanner may find it).
#[inline(always)]
fn glanced(
    operation: Operation,
    event: &[u8],
    layout: &mut Layout,
    reader: &mut Reader<'_>,
) -> bool {
    let first = reader.seen.content_chunks == 0;
    // The model first: the cheaper search, and a chunk that does not name
    // it plainly (a serializer that sorts its keys writes it after the
    // choices) is read whole whatever the glance would find.
    let model = if first
        && reader.seen.response_model.is_none()
        && matches!(operation, Operation::Chat | Operation::TextCompletion)
    {
        let Some(model) = crate::chunk::model(event) else {
            return false;
        };
        Some(model)
    } else {
        None
    };
    let (content, reason) = match operation.glance(event, layout, first) {
        Glance::Words { content } => (content, None),
        Glance::Last { content, reason } => (content, Some(reason)),
        Glance::More => return false,
    };
    let seen = &mut *reader.seen;
    if let Some(model) = model {
        seen.response_model = Some(reader.config.model(model));
    }
    if let Some(reason) = reason {
        seen.finish_reason = finish_reason(reason).or(seen.finish_reason);
    }
    if content {
        seen.content_chunks += 1;
    }
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn config() -> Arc<Config> {
        let layer = crate::OpenAiLayer::new(&nemo_lens_core::Meter::noop()).models(["llama"]);
        layer.config_for_tests()
    }

    fn streamed(config: &Arc<Config>) -> Box<Recording> {
        streamed_as(config, Operation::Chat)
    }

    fn streamed_as(config: &Arc<Config>, operation: Operation) -> Box<Recording> {
        let mut recording = Recording::start(operation, FromRequest::new(Arc::clone(config)));
        let head = http::Response::builder()
            .header(CONTENT_TYPE, "text/event-stream; charset=utf-8")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        recording.response(&head);
        recording
    }

    /// What a stream showed, in a form that compares.
    fn summary(seen: &Seen) -> String {
        format!(
            "model={:?} first={} chunks={} prompt={:?} completion={:?} cached={:?} written={:?} reasoning={:?} finish={:?} error={}",
            seen.response_model.as_ref().map(|m| m.as_str().to_owned()),
            seen.first_content.is_some(),
            seen.content_chunks,
            seen.prompt_tokens,
            seen.completion_tokens,
            seen.cached_tokens,
            seen.cache_write_tokens,
            seen.reasoning_tokens,
            seen.finish_reason,
            seen.error_event,
        )
    }

    const STREAM: &str = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
        ": a comment\r\n\r\n",
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"one\"},\"finish_reason\":null}]}\n\n",
        "data: {\"object\": \"chat.completion.chunk\", \"model\": \"llama\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \" two\"}, \"finish_reason\": null}]}\r\n\r\n",
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" three\"},\"finish_reason\":null}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":5}}}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn a_stream_reads_the_same_however_it_is_split() {
        let config = config();
        let mut whole = streamed(&config);
        whole.data(STREAM.as_bytes());
        let expected = summary(&whole.seen);
        assert_eq!(
            expected,
            "model=Some(\"llama\") first=true chunks=4 prompt=Some(9) completion=Some(4) \
             cached=Some(5) written=None reasoning=None finish=Some(Stop) error=false"
        );
        let bytes = STREAM.as_bytes();
        for at in 0..bytes.len() {
            let mut split = streamed(&config);
            split.data(&bytes[..at]);
            split.data(&bytes[at..]);
            assert_eq!(summary(&split.seen), expected, "split at {at}");
        }
        let mut byte_by_byte = streamed(&config);
        for byte in bytes.chunks(1) {
            byte_by_byte.data(byte);
        }
        assert_eq!(summary(&byte_by_byte.seen), expected, "byte by byte");
    }

    /// What a stream read by `operation`'s readers showed, in one piece.
    pub(crate) fn read(operation: Operation, stream: &[u8]) -> String {
        let mut recording = streamed_as(&config(), operation);
        recording.data(stream);
        summary(&recording.seen)
    }

    /// Reads `stream` whole, split at every byte and byte by byte, and
    /// checks the three agree; the summary of the whole.
    fn read_every_way(operation: Operation, stream: &str) -> String {
        let config = config();
        let mut whole = streamed_as(&config, operation);
        whole.data(stream.as_bytes());
        let expected = summary(&whole.seen);
        let bytes = stream.as_bytes();
        for at in 0..bytes.len() {
            let mut split = streamed_as(&config, operation);
            split.data(&bytes[..at]);
            split.data(&bytes[at..]);
            assert_eq!(summary(&split.seen), expected, "split at {at}");
        }
        let mut byte_by_byte = streamed_as(&config, operation);
        for byte in bytes.chunks(1) {
            byte_by_byte.data(byte);
        }
        assert_eq!(summary(&byte_by_byte.seen), expected, "byte by byte");
        expected
    }

    const RESPONSES_STREAM: &str = concat!(
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"model\":\"llama\",\"status\":\"in_progress\",\"error\":null,\"output\":[],\"usage\":null},\"sequence_number\":0}\n\n",
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"one\",\"sequence_number\":1}\n\n",
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\" two\",\"sequence_number\":2}\n\n",
        "event: response.reasoning_text.delta\ndata: {\"delta\":\" hmm\",\"type\":\"response.reasoning_text.delta\",\"sequence_number\":3}\n\n",
        "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"text\":\"one two\",\"sequence_number\":4}\n\n",
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"model\":\"llama\",\"status\":\"completed\",\"error\":null,",
        "\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"one two\"}]}],",
        "\"usage\":{\"input_tokens\":9,\"input_tokens_details\":{\"cached_tokens\":5},\"output_tokens\":3,\"output_tokens_details\":{\"reasoning_tokens\":1},\"total_tokens\":12}},\"sequence_number\":5}\n\n",
    );

    #[test]
    fn a_responses_stream_reads_its_deltas_and_the_usage_of_response_completed() {
        assert_eq!(
            read_every_way(Operation::Responses, RESPONSES_STREAM),
            "model=Some(\"llama\") first=true chunks=3 prompt=Some(9) completion=Some(3) \
             cached=Some(5) written=None reasoning=Some(1) finish=Some(Stop) error=false"
        );
        let failed = concat!(
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\n",
            "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n",
        );
        assert!(read_every_way(Operation::Responses, failed).ends_with("error=true"));
        let error = "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\",\"param\":null}\n\n";
        assert!(read_every_way(Operation::Responses, error).ends_with("error=true"));
    }

    const MESSAGES_STREAM: &str = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"llama\",\"content\":[],\"stop_reason\":null,",
        "\"usage\":{\"input_tokens\":4,\"cache_read_input_tokens\":6,\"cache_creation_input_tokens\":2,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"one\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" two\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );

    #[test]
    fn a_messages_stream_reads_its_deltas_and_both_usages() {
        assert_eq!(
            read_every_way(Operation::Messages, MESSAGES_STREAM),
            "model=Some(\"llama\") first=true chunks=2 prompt=Some(4) completion=Some(2) \
             cached=Some(6) written=Some(2) reasoning=None finish=Some(Length) error=false"
        );
        let error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        assert!(read_every_way(Operation::Messages, error).ends_with("error=true"));
    }

    #[test]
    fn the_operation_of_a_path() {
        let post = &http::Method::POST;
        for (path, operation) in [
            ("/v1/chat/completions", Some(Operation::Chat)),
            ("/v1/completions/", Some(Operation::TextCompletion)),
            ("/v1/responses", Some(Operation::Responses)),
            ("/anthropic/v1/messages", Some(Operation::Messages)),
            ("/v1/embeddings", Some(Operation::Embeddings)),
            ("/v1/threads/thread_1/messages", None),
            ("/v1/responses/resp_1/cancel", None),
            ("/v1/messages/count_tokens", None),
        ] {
            assert_eq!(Operation::of(post, path), operation, "{path}");
        }
        assert_eq!(Operation::of(&http::Method::GET, "/v1/responses"), None);
    }

    #[test]
    fn an_error_event_is_an_error_and_a_null_error_is_not() {
        let config = config();
        let mut failed = streamed(&config);
        failed.data(b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n");
        failed.data(b"data: {\"error\":{\"message\":\"engine died\",\"code\":500}}\n\n");
        assert!(failed.seen.error_event);
        let mut fine = streamed(&config);
        fine.data(b"data: {\"error\":null,\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n");
        assert!(!fine.seen.error_event);
    }

    #[test]
    fn the_media_type_is_read_whatever_its_case() {
        let config = config();
        let mode_of = |content_type: &str| {
            let mut recording =
                Recording::start(Operation::Chat, FromRequest::new(Arc::clone(&config)));
            let head = http::Response::builder()
                .header(CONTENT_TYPE, content_type)
                .body(())
                .unwrap()
                .into_parts()
                .0;
            recording.response(&head);
            match recording.mode {
                Mode::Stream { .. } => "stream",
                Mode::Document(_) => "document",
                Mode::Opaque => "opaque",
            }
        };
        for (content_type, mode) in [
            ("text/event-stream", "stream"),
            ("TEXT/Event-Stream ; charset=utf-8", "stream"),
            ("application/json", "document"),
            (" Application/JSON;charset=UTF-8", "document"),
            ("application/problem+JSON", "document"),
            ("application/jsonl", "opaque"),
            ("text/plain", "opaque"),
            ("+json", "opaque"),
        ] {
            assert_eq!(mode_of(content_type), mode, "{content_type}");
        }
    }

    /// glibc's malloc serves a request of up to 1,032 bytes from a
    /// per-thread cache; a larger one takes its slow path, which first
    /// sorts every freed small block of the thread's arena: a cost the
    /// server's own allocations then pay too. One recording is allocated
    /// a request.
    #[test]
    fn recording_fits_the_allocator_s_thread_cache() {
        let size = std::mem::size_of::<Recording>();
        assert!(size <= 1_000, "a Recording is {size} bytes");
        let scan = std::mem::size_of::<JsonScan>();
        assert!(scan <= 160, "a JsonScan is {scan} bytes");
    }
}
