//! An incremental JSON scanner that reports the few values of an OpenAI
//! request or response the layer records, from bytes fed in any pieces,
//! without building the document or buffering the body.
//!
//! It tracks the path from the root (`usage.prompt_tokens_details.cached_tokens`)
//! and reports a value when the path is one of [`Field`]; long strings it
//! does not keep (prompts, completions) are skipped with `memchr`. A
//! malformed document stops the scan: nothing after the fault is reported.

/// A value the layer records, by where it sits in the document. The paths
/// of the four APIs (Chat Completions and Completions, Responses, Anthropic
/// Messages, Embeddings) do not overlap, so one table serves them all; the
/// Responses API's events nest its object under `response`, Anthropic's
/// `message_start` under `message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// `model` (or `response.model`, `message.model`).
    Model,
    /// `usage.prompt_tokens`, or `usage.input_tokens` (Responses and
    /// Messages).
    PromptTokens,
    /// `usage.completion_tokens`, or `usage.output_tokens`.
    CompletionTokens,
    /// `usage.prompt_tokens_details.cached_tokens`,
    /// `usage.input_tokens_details.cached_tokens` (Responses) or
    /// `usage.cache_read_input_tokens` (Messages).
    CachedTokens,
    /// `usage.cache_creation_input_tokens` (Messages).
    CacheWriteTokens,
    /// `usage.completion_tokens_details.reasoning_tokens` or
    /// `usage.output_tokens_details.reasoning_tokens` (Responses).
    ReasoningTokens,
    /// `choices[i].finish_reason`; a response's `status` (Responses); a
    /// message's `stop_reason` (Messages).
    FinishReason,
    /// Generated text: `choices[i].delta.content` (or `reasoning_content`,
    /// or a tool call's `function.arguments`), the same under `message`,
    /// and `choices[i].text`; a Responses event's `delta` and a non-streamed
    /// response's `output[i].content[j].text`; a Messages delta's `text`,
    /// `thinking` or `partial_json` and a message's `content[i].text` or
    /// `thinking`.
    Content,
    /// A top-level `error` (or `response.error`): the body reports a failure.
    Error,
    /// A top-level `type`: the event's type in the Responses and Messages
    /// APIs.
    EventType,
}

/// What a reported value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found<'a> {
    /// A string, as written between the quotes (escapes not decoded), at
    /// most [`CAPTURE_MAX`] bytes; content strings are reported with no bytes.
    Str { bytes: &'a [u8], empty: bool },
    /// A non-negative integer.
    Number(u64),
    /// `null`.
    Null,
    /// Any other value (an object, an array, a boolean, a fraction).
    Other,
}

/// Where a [`JsonScan`] reports what it finds.
pub(crate) trait Sink {
    fn found(&mut self, field: Field, value: Found<'_>);

    /// Whether the sink has all it wants: the scan stops after the string
    /// that completed it (a request's `model`, ahead of a long prompt).
    fn is_done(&self) -> bool {
        false
    }
}

/// Longest string kept for a report; a longer one is reported cut.
pub(crate) const CAPTURE_MAX: usize = 256;
/// Deepest nesting read: a deeper document stops the scan (no OpenAI body
/// comes close; a hostile one costs nothing).
const DEPTH_MAX: usize = 128;
/// Keys longer than this are no key the scanner looks for.
const KEY_MAX: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Model,
    Usage,
    PromptTokens,
    CompletionTokens,
    PromptTokensDetails,
    CachedTokens,
    CompletionTokensDetails,
    ReasoningTokens,
    Choices,
    FinishReason,
    Delta,
    Message,
    Content,
    ReasoningContent,
    Text,
    ToolCalls,
    Function,
    Arguments,
    Error,
    Response,
    Type,
    InputTokens,
    OutputTokens,
    InputTokensDetails,
    OutputTokensDetails,
    CacheReadInputTokens,
    CacheCreationInputTokens,
    Output,
    Status,
    StopReason,
    Thinking,
    PartialJson,
    Other,
}

impl Key {
    fn of(name: &[u8]) -> Key {
        match name {
            b"model" => Key::Model,
            b"usage" => Key::Usage,
            b"prompt_tokens" => Key::PromptTokens,
            b"completion_tokens" => Key::CompletionTokens,
            b"prompt_tokens_details" => Key::PromptTokensDetails,
            b"cached_tokens" => Key::CachedTokens,
            b"completion_tokens_details" => Key::CompletionTokensDetails,
            b"reasoning_tokens" => Key::ReasoningTokens,
            b"choices" => Key::Choices,
            b"finish_reason" => Key::FinishReason,
            b"delta" => Key::Delta,
            b"message" => Key::Message,
            b"content" => Key::Content,
            b"reasoning_content" => Key::ReasoningContent,
            b"text" => Key::Text,
            b"tool_calls" => Key::ToolCalls,
            b"function" => Key::Function,
            b"arguments" => Key::Arguments,
            b"error" => Key::Error,
            b"response" => Key::Response,
            b"type" => Key::Type,
            b"input_tokens" => Key::InputTokens,
            b"output_tokens" => Key::OutputTokens,
            b"input_tokens_details" => Key::InputTokensDetails,
            b"output_tokens_details" => Key::OutputTokensDetails,
            b"cache_read_input_tokens" => Key::CacheReadInputTokens,
            b"cache_creation_input_tokens" => Key::CacheCreationInputTokens,
            b"output" => Key::Output,
            b"status" => Key::Status,
            b"stop_reason" => Key::StopReason,
            b"thinking" => Key::Thinking,
            b"partial_json" => Key::PartialJson,
            _ => Key::Other,
        }
    }
}

/// The member an open container is at: a key of an object, or an element
/// of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg {
    Key(Key),
    Index,
}

/// How many bytes of a string or key's `rest` come before its closing
/// quote or next escape (all of them when neither is in this piece): one
/// search instead of a turn of the scanner's loop a byte.
#[inline]
fn to_quote_or_escape(rest: &[u8]) -> usize {
    memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len())
}

#[inline]
fn field_of(path: &[Seg]) -> Option<Field> {
    // No field's path ends in an array element or a key the scanner does
    // not know: most values end there, and need no look-up.
    match path.last() {
        Some(Seg::Index | Seg::Key(Key::Other)) => None,
        _ => field_of_known(path),
    }
}

fn field_of_known(path: &[Seg]) -> Option<Field> {
    use Key::*;
    use Seg::Key as K;
    // The Responses API's events carry the response object under
    // `response`, Anthropic's `message_start` the message under `message`:
    // read them as the object itself.
    let object = match path {
        [K(Response | Message), rest @ ..] if !rest.is_empty() => rest,
        _ => path,
    };
    Some(match object {
        [K(Model)] => Field::Model,
        [K(Error)] => Field::Error,
        [K(Usage), K(PromptTokens | InputTokens)] => Field::PromptTokens,
        [K(Usage), K(CompletionTokens | OutputTokens)] => Field::CompletionTokens,
        [K(Usage), K(PromptTokensDetails | InputTokensDetails), K(CachedTokens)]
        | [K(Usage), K(CacheReadInputTokens)] => Field::CachedTokens,
        [K(Usage), K(CacheCreationInputTokens)] => Field::CacheWriteTokens,
        [K(Usage), K(CompletionTokensDetails | OutputTokensDetails), K(ReasoningTokens)] => {
            Field::ReasoningTokens
        }
        [K(Status | StopReason)] => Field::FinishReason,
        _ => return field_of_unnested(path),
    })
}

/// The fields only found at their own path, never under `response` or
/// `message` (where the full output is repeated, already counted).
fn field_of_unnested(path: &[Seg]) -> Option<Field> {
    use Key::*;
    use Seg::{Index, Key as K};
    Some(match path {
        [K(Type)] => Field::EventType,
        [K(Choices), Index, K(FinishReason)] | [K(Delta), K(StopReason)] => Field::FinishReason,
        [K(Choices), Index, K(Text)] => Field::Content,
        [K(Choices), Index, K(Delta | Message), K(Content | ReasoningContent)] => Field::Content,
        [K(Choices), Index, K(Delta | Message), K(ToolCalls), Index, K(Function), K(Arguments)] => {
            Field::Content
        }
        [K(Delta)] | [K(Delta), K(Text | Thinking | PartialJson)] => Field::Content,
        [K(Output), Index, K(Content), Index, K(Text)] => Field::Content,
        [K(Content), Index, K(Text | Thinking)] => Field::Content,
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before a value.
    Value,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After a value: `,`, `}` or `]`.
    AfterValue,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    KeyStart,
    /// Inside a key.
    Key { escape: bool },
    /// After a key: `:`.
    Colon,
    /// Inside a string value; `fresh` until its first byte is seen.
    Str { escape: bool, fresh: bool },
    /// Inside a number or a literal (`true`, `false`, `null`).
    Scalar,
    /// The document is complete, or malformed: nothing more is read.
    Stopped,
}

/// The scanner; see the module docs.
///
/// It holds its state inline (a few hundred bytes, no allocation), since
/// one is made per request.
#[derive(Debug)]
pub(crate) struct JsonScan {
    /// One entry per open container, the member it is at.
    path: [Seg; DEPTH_MAX],
    depth: usize,
    state: State,
    key: [u8; KEY_MAX],
    key_len: usize,
    /// The field of the value being read, if reported.
    field: Option<Field>,
    capture: [u8; CAPTURE_MAX],
    captured: usize,
    number: Option<u64>,
    literal: u8,
    /// The field of the current path, once looked up; `None` when the path
    /// changed since.
    member_field: Option<Option<Field>>,
}

impl Default for JsonScan {
    fn default() -> Self {
        JsonScan {
            path: [Seg::Index; DEPTH_MAX],
            depth: 0,
            state: State::Value,
            key: [0; KEY_MAX],
            key_len: 0,
            field: None,
            capture: [0; CAPTURE_MAX],
            captured: 0,
            number: None,
            literal: 0,
            member_field: None,
        }
    }
}

impl JsonScan {
    /// Ready for a new document.
    pub(crate) fn reset(&mut self) {
        self.depth = 0;
        self.member_field = None;
        self.state = State::Value;
        self.field = None;
    }

    /// Whether the document ended, could not be read, or gave the sink all
    /// it wanted ([`Sink::is_done`]).
    pub(crate) fn is_stopped(&self) -> bool {
        self.state == State::Stopped
    }

    /// Scans the next piece of the document.
    pub(crate) fn feed(&mut self, bytes: &[u8], sink: &mut impl Sink) {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match self.state {
                State::Stopped => return,
                State::Str { escape, fresh } => {
                    if fresh {
                        if let Some(Field::Content) = self.field {
                            // Content is reported as soon as its first byte
                            // says whether it is empty.
                            sink.found(
                                Field::Content,
                                Found::Str {
                                    bytes: &[],
                                    empty: b == b'"',
                                },
                            );
                            self.field = None;
                        }
                        self.state = State::Str {
                            escape,
                            fresh: false,
                        };
                    }
                    if escape {
                        self.keep(b);
                        self.state = State::Str {
                            escape: false,
                            fresh: false,
                        };
                        i += 1;
                        continue;
                    }
                    // Keeping what the report needs of the run.
                    let rest = &bytes[i..];
                    let run = to_quote_or_escape(rest);
                    self.keep_all(&rest[..run]);
                    i += run;
                    match bytes.get(i) {
                        Some(b'\\') => {
                            self.keep(b'\\');
                            self.state = State::Str {
                                escape: true,
                                fresh: false,
                            };
                        }
                        Some(_) => {
                            self.state = State::AfterValue;
                            if let Some(field) = self.field.take() {
                                let bytes = &self.capture[..self.captured];
                                sink.found(
                                    field,
                                    Found::Str {
                                        bytes,
                                        empty: bytes.is_empty(),
                                    },
                                );
                                if sink.is_done() {
                                    self.state = State::Stopped;
                                    return;
                                }
                            }
                        }
                        None => return,
                    }
                    i += 1;
                }
                State::Scalar if self.field.is_none() => {
                    // A value nobody asked for (an embedding's thousand
                    // floats): skip its bytes in one run, and the numbers
                    // after it in the same array, which nobody asked for
                    // either (the elements of an array share a path).
                    let rest = &bytes[i..];
                    let mut run = scalar_run(rest);
                    if self.open() == Some(Seg::Index) && self.member_field == Some(None) {
                        while let [b',', next, ..] = rest[run..] {
                            if !(next.is_ascii_digit() || next == b'-') {
                                break;
                            }
                            run += 1 + scalar_run(&rest[run + 1..]);
                        }
                    }
                    i += run;
                    if run < rest.len() {
                        self.literal = 0;
                        self.state = State::AfterValue;
                    }
                }
                State::Scalar => {
                    if is_scalar_byte(b) {
                        self.scalar_byte(b);
                        i += 1;
                    } else {
                        self.end_scalar(sink);
                        self.state = State::AfterValue;
                    }
                }
                // Between tokens only: inside a key a space is part of it.
                State::Value
                | State::ValueOrEnd
                | State::AfterValue
                | State::KeyOrEnd
                | State::KeyStart
                | State::Colon
                    if b.is_ascii_whitespace() =>
                {
                    i += 1
                }
                State::Value => {
                    self.value(b, sink);
                    i += 1;
                }
                State::ValueOrEnd => {
                    if b == b']' {
                        self.close();
                    } else {
                        self.value(b, sink);
                    }
                    i += 1;
                }
                State::AfterValue => {
                    match (b, self.open()) {
                        (b',', Some(Seg::Index)) => self.state = State::Value,
                        // `,"` as compact JSON writes it: the key at once.
                        (b',', Some(Seg::Key(_))) if bytes.get(i + 1) == Some(&b'"') => {
                            i = self.key(bytes, i + 2);
                            continue;
                        }
                        (b',', Some(Seg::Key(_))) => self.state = State::KeyStart,
                        (b'}', Some(Seg::Key(_))) | (b']', Some(Seg::Index)) => self.close(),
                        _ => self.state = State::Stopped,
                    }
                    i += 1;
                }
                State::KeyOrEnd | State::KeyStart => match b {
                    b'"' => i = self.key(bytes, i + 1),
                    b'}' if self.state == State::KeyOrEnd => {
                        self.close();
                        i += 1;
                    }
                    _ => self.state = State::Stopped,
                },
                State::Key { escape: true } => {
                    self.key_bytes(&[b]);
                    self.state = State::Key { escape: false };
                    i = self.key_rest(bytes, i + 1);
                }
                State::Key { escape: false } => i = self.key_rest(bytes, i),
                State::Colon => {
                    self.state = if b == b':' {
                        State::Value
                    } else {
                        State::Stopped
                    };
                    i += 1;
                }
            }
        }
    }

    /// Starts a key whose opening quote came before `i`; see
    /// [`key_rest`](Self::key_rest).
    #[inline]
    fn key(&mut self, bytes: &[u8], i: usize) -> usize {
        self.key_len = 0;
        self.key_rest(bytes, i)
    }

    /// Reads a key from `i` to its closing quote, and the `:` after it when
    /// it follows at once (compact JSON); the index after what was read.
    #[inline]
    fn key_rest(&mut self, bytes: &[u8], i: usize) -> usize {
        let rest = &bytes[i..];
        let run = to_quote_or_escape(rest);
        let name = &rest[..run];
        let i = i + run;
        match bytes.get(i) {
            Some(b'\\') => {
                self.key_bytes(name);
                self.key_bytes(b"\\");
                self.state = State::Key { escape: true };
                i + 1
            }
            Some(_) => {
                // A key read in one piece is looked up where it lies.
                let key = match self.key_len {
                    0 if name.len() <= KEY_MAX => Key::of(name),
                    0 => Key::Other,
                    _ => {
                        self.key_bytes(name);
                        match self.key_len {
                            len if len <= KEY_MAX => Key::of(&self.key[..len]),
                            _ => Key::Other,
                        }
                    }
                };
                self.set_member(Seg::Key(key));
                if bytes.get(i + 1) == Some(&b':') {
                    self.state = State::Value;
                    i + 2
                } else {
                    self.state = State::Colon;
                    i + 1
                }
            }
            None => {
                self.key_bytes(name);
                self.state = State::Key { escape: false };
                i
            }
        }
    }

    /// Ends a number or literal that the document's end cut short (a bare
    /// top-level number).
    pub(crate) fn finish(&mut self, sink: &mut impl Sink) {
        if self.state == State::Scalar {
            self.end_scalar(sink);
            self.state = State::Stopped;
        }
    }

    fn value(&mut self, b: u8, sink: &mut impl Sink) {
        // The elements of an array share their path: its field is looked
        // up once.
        self.field = match self.member_field {
            Some(field) => field,
            None => {
                let field = field_of(&self.path[..self.depth]);
                self.member_field = Some(field);
                field
            }
        };
        match b {
            b'{' | b'[' => {
                if let Some(field) = self.field.take() {
                    sink.found(field, Found::Other);
                }
                if self.depth == DEPTH_MAX {
                    self.state = State::Stopped;
                    return;
                }
                let (seg, next) = match b {
                    b'{' => (Seg::Key(Key::Other), State::KeyOrEnd),
                    _ => (Seg::Index, State::ValueOrEnd),
                };
                self.path[self.depth] = seg;
                self.depth += 1;
                self.member_field = None;
                self.state = next;
            }
            b'"' => {
                self.captured = 0;
                self.state = State::Str {
                    escape: false,
                    fresh: true,
                };
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.number = b.is_ascii_digit().then_some(0);
                self.literal = b;
                self.state = State::Scalar;
                self.scalar_byte(b);
            }
            _ => self.state = State::Stopped,
        }
    }

    fn scalar_byte(&mut self, b: u8) {
        self.number = match (self.number, b) {
            (Some(n), b'0'..=b'9') => {
                Some(n.saturating_mul(10).saturating_add(u64::from(b - b'0')))
            }
            _ => None,
        };
    }

    fn end_scalar(&mut self, sink: &mut impl Sink) {
        if let Some(field) = self.field.take() {
            let found = match (self.number, self.literal) {
                (Some(n), _) => Found::Number(n),
                (None, b'n') => Found::Null,
                _ => Found::Other,
            };
            sink.found(field, found);
        }
        self.literal = 0;
    }

    fn keep(&mut self, b: u8) {
        self.keep_all(&[b]);
    }

    fn keep_all(&mut self, bytes: &[u8]) {
        if self.field.is_some() {
            let n = bytes.len().min(CAPTURE_MAX - self.captured);
            self.capture[self.captured..self.captured + n].copy_from_slice(&bytes[..n]);
            self.captured += n;
        }
    }

    /// Appends to the key read so far; past [`KEY_MAX`] bytes only the
    /// length grows (no key we look for is that long).
    fn key_bytes(&mut self, bytes: &[u8]) {
        let from = self.key_len.min(KEY_MAX);
        let n = bytes.len().min(KEY_MAX - from);
        self.key[from..from + n].copy_from_slice(&bytes[..n]);
        self.key_len = self.key_len.saturating_add(bytes.len());
    }

    /// The member the innermost container is at.
    fn open(&self) -> Option<Seg> {
        self.depth.checked_sub(1).map(|top| self.path[top])
    }

    fn set_member(&mut self, seg: Seg) {
        self.member_field = None;
        if let Some(top) = self.depth.checked_sub(1) {
            self.path[top] = seg;
        }
    }

    fn close(&mut self) {
        self.member_field = None;
        self.depth = self.depth.saturating_sub(1);
        self.state = if self.depth == 0 {
            State::Stopped
        } else {
            State::AfterValue
        };
    }
}

/// A byte of a number or a literal (`true`, `false`, `null`).
#[inline]
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// How many bytes at the start of `bytes` belong to a number or literal.
#[inline]
fn scalar_run(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| !is_scalar_byte(b))
        .unwrap_or(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Vec<(Field, String)>);

    impl Sink for Seen {
        fn found(&mut self, field: Field, value: Found<'_>) {
            let value = match value {
                Found::Str { bytes, empty } => match field {
                    Field::Content => format!("content empty={empty}"),
                    _ => String::from_utf8_lossy(bytes).into_owned(),
                },
                Found::Number(n) => n.to_string(),
                Found::Null => "null".to_owned(),
                Found::Other => "other".to_owned(),
            };
            self.0.push((field, value));
        }
    }

    fn scan_in(pieces: &[&[u8]]) -> (Vec<(Field, String)>, bool) {
        let mut scan = JsonScan::default();
        let mut seen = Seen::default();
        for piece in pieces {
            scan.feed(piece, &mut seen);
        }
        scan.finish(&mut seen);
        (seen.0, scan.is_stopped())
    }

    fn scan(doc: &str) -> Vec<(Field, String)> {
        let whole = scan_in(&[doc.as_bytes()]);
        // Fed one byte at a time, the same reports.
        let bytes: Vec<&[u8]> = doc.as_bytes().chunks(1).collect();
        assert_eq!(scan_in(&bytes), whole, "byte by byte: {doc}");
        whole.0
    }

    fn seen(pairs: &[(Field, &str)]) -> Vec<(Field, String)> {
        pairs.iter().map(|(f, v)| (*f, (*v).to_owned())).collect()
    }

    #[test]
    fn a_streamed_chat_chunk() {
        let chunk = r#"{"id":"c1","object":"chat.completion.chunk","model":"llama","choices":[{"index":0,"delta":{"role":"assistant","content":" hi"},"finish_reason":null}]}"#;
        assert_eq!(
            scan(chunk),
            seen(&[
                (Field::Model, "llama"),
                (Field::Content, "content empty=false"),
                (Field::FinishReason, "null"),
            ])
        );
        let empty =
            r#"{"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "length"}]}"#;
        assert_eq!(
            scan(empty),
            seen(&[
                (Field::Content, "content empty=true"),
                (Field::FinishReason, "length"),
            ])
        );
    }

    #[test]
    fn usage_with_its_details() {
        let usage = r#"{"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5,
            "total_tokens": 17, "prompt_tokens_details": {"cached_tokens": 8},
            "completion_tokens_details": {"reasoning_tokens": 2}}}"#;
        assert_eq!(
            scan(usage),
            seen(&[
                (Field::PromptTokens, "12"),
                (Field::CompletionTokens, "5"),
                (Field::CachedTokens, "8"),
                (Field::ReasoningTokens, "2"),
            ])
        );
    }

    /// A sink that wants the model alone, as a request's does.
    #[derive(Default)]
    struct ModelOnly(Seen);

    impl Sink for ModelOnly {
        fn found(&mut self, field: Field, value: Found<'_>) {
            self.0.found(field, value);
        }

        fn is_done(&self) -> bool {
            self.0 .0.iter().any(|(field, _)| *field == Field::Model)
        }
    }

    #[test]
    fn a_sink_that_has_what_it_wants_stops_the_scan() {
        let body = br#"{"stream": true, "model":"llama","messages":[{"role":"user","content":"hi"}],"usage":{"prompt_tokens":3}}"#;
        for step in [body.len(), 1] {
            let mut scan = JsonScan::default();
            let mut sink = ModelOnly::default();
            for piece in body.chunks(step) {
                scan.feed(piece, &mut sink);
            }
            assert!(scan.is_stopped(), "pieces of {step}");
            assert_eq!(
                sink.0 .0,
                seen(&[(Field::Model, "llama")]),
                "pieces of {step}"
            );
        }
    }

    #[test]
    fn only_the_top_level_model_and_never_inside_strings() {
        let request = r#"{"messages":[{"role":"user","content":"say \"model\": \"x\" {"}],
            "tools":[{"function":{"parameters":{"properties":{"model":{"type":"string"}}}}}],
            "model":"llama-3-8b","stream":true,"max_tokens":16}"#;
        assert_eq!(scan(request), seen(&[(Field::Model, "llama-3-8b")]));
    }

    #[test]
    fn completions_text_and_a_non_streamed_message() {
        let completion = r#"{"object":"text_completion","choices":[{"text":"ab","index":0,"finish_reason":"stop"}]}"#;
        assert_eq!(
            scan(completion),
            seen(&[
                (Field::Content, "content empty=false"),
                (Field::FinishReason, "stop")
            ])
        );
        let message = r#"{"choices":[{"message":{"role":"assistant","content":"x"}}],"usage":{"completion_tokens":1}}"#;
        assert_eq!(
            scan(message),
            seen(&[
                (Field::Content, "content empty=false"),
                (Field::CompletionTokens, "1")
            ])
        );
    }

    #[test]
    fn an_embedding_s_numbers_are_skipped_and_its_usage_read() {
        let reply = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0123,-2.5e-3,1E+2,true,null]}],
            "model":"m","usage":{"prompt_tokens":12,"total_tokens":12}}"#;
        assert_eq!(
            scan(reply),
            seen(&[(Field::Model, "m"), (Field::PromptTokens, "12")])
        );
        // Numbers in nested arrays, then a reported one after them.
        let nested = r#"{"data":[[1,-2,3.5],[4e2,5]],"usage":{"prompt_tokens":7}}"#;
        assert_eq!(scan(nested), seen(&[(Field::PromptTokens, "7")]));
    }

    #[test]
    fn responses_and_messages_usage_under_their_envelopes() {
        let completed = r#"{"type":"response.completed","response":{"model":"m","status":"completed","error":null,
            "output":[{"type":"message","content":[{"type":"output_text","text":"not counted again"}]}],
            "usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":5},"output_tokens":3,
                     "output_tokens_details":{"reasoning_tokens":1}}}}"#;
        assert_eq!(
            scan(completed),
            seen(&[
                (Field::EventType, "response.completed"),
                (Field::Model, "m"),
                (Field::FinishReason, "completed"),
                (Field::Error, "null"),
                (Field::PromptTokens, "9"),
                (Field::CachedTokens, "5"),
                (Field::CompletionTokens, "3"),
                (Field::ReasoningTokens, "1"),
            ])
        );
        let start = r#"{"type":"message_start","message":{"model":"m","content":[],"stop_reason":null,
            "usage":{"input_tokens":4,"cache_read_input_tokens":6,"cache_creation_input_tokens":2,"output_tokens":1}}}"#;
        assert_eq!(
            scan(start),
            seen(&[
                (Field::EventType, "message_start"),
                (Field::Model, "m"),
                (Field::FinishReason, "null"),
                (Field::PromptTokens, "4"),
                (Field::CachedTokens, "6"),
                (Field::CacheWriteTokens, "2"),
                (Field::CompletionTokens, "1"),
            ])
        );
    }

    #[test]
    fn a_space_inside_a_key_is_part_of_it() {
        assert_eq!(
            scan(r#"{"mo del":"x","model" : "m"}"#),
            seen(&[(Field::Model, "m")])
        );
    }

    #[test]
    fn tool_call_arguments_are_content() {
        let chunk = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\""}}]},"finish_reason":null}]}"#;
        assert_eq!(
            scan(chunk),
            seen(&[
                (Field::Content, "content empty=false"),
                (Field::FinishReason, "null")
            ])
        );
    }

    #[test]
    fn an_error_body() {
        let error =
            r#"{"error": {"message": "The model `x` does not exist.", "code": "model_not_found"}}"#;
        assert_eq!(scan(error), seen(&[(Field::Error, "other")]));
        assert_eq!(scan(r#"{"error": null}"#), seen(&[(Field::Error, "null")]));
    }

    #[test]
    fn a_malformed_or_hostile_document_stops_without_a_report_or_panic() {
        let (found, stopped) = scan_in(&[br#"{"model": , "usage": {"prompt_tokens": 3}}"#]);
        assert!(found.is_empty() && stopped);
        let deep = "[".repeat(100_000);
        let (found, stopped) = scan_in(&[deep.as_bytes()]);
        assert!(found.is_empty() && stopped);
        let long_model = format!(r#"{{"model":"{}"}}"#, "m".repeat(10_000));
        let (found, _) = scan_in(&[long_model.as_bytes()]);
        assert_eq!(found[0].1.len(), CAPTURE_MAX, "a long string is kept cut");
        // Numbers that are not token counts are reported as other values.
        assert_eq!(
            scan(r#"{"usage":{"prompt_tokens":-1,"completion_tokens":2.5}}"#),
            seen(&[
                (Field::PromptTokens, "other"),
                (Field::CompletionTokens, "other")
            ])
        );
    }
}
