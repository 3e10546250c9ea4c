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
/// comes close; a hostile one costs nothing). One bit of
/// [`JsonScan::arrays`] a level.
const DEPTH_MAX: usize = 128;
/// Levels whose member is kept: no [`Field`]'s path is longer (the longest,
/// a tool call's `arguments`, is 7), so deeper values are never reported.
const PATH_MAX: usize = 8;
// `JsonScan::arrays` has a bit for each level read.
const _: () = assert!(DEPTH_MAX <= u128::BITS as usize && PATH_MAX < DEPTH_MAX);
/// Keys longer than this are no key the scanner looks for.
const KEY_MAX: usize = 32;

/// Declares [`Key`], its look-up by name and (for tests) the list of its
/// values from one table, so that the three cannot drift apart.
macro_rules! keys {
    ($($key:ident = $name:literal,)*) => {
        /// A key the scanner knows, by its name in the document.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Key {
            $($key,)*
            /// Any other key.
            Other,
        }

        impl Key {
            #[cfg(test)]
            const ALL: &[Key] = &[$(Key::$key,)* Key::Other];

            fn of(name: &[u8]) -> Key {
                match name {
                    $($name => Key::$key,)*
                    _ => Key::Other,
                }
            }
        }
    };
}

keys! {
    Model = b"model",
    Usage = b"usage",
    PromptTokens = b"prompt_tokens",
    CompletionTokens = b"completion_tokens",
    PromptTokensDetails = b"prompt_tokens_details",
    CachedTokens = b"cached_tokens",
    CompletionTokensDetails = b"completion_tokens_details",
    ReasoningTokens = b"reasoning_tokens",
    Choices = b"choices",
    FinishReason = b"finish_reason",
    Delta = b"delta",
    Message = b"message",
    Content = b"content",
    ReasoningContent = b"reasoning_content",
    Text = b"text",
    ToolCalls = b"tool_calls",
    Function = b"function",
    Arguments = b"arguments",
    Error = b"error",
    Response = b"response",
    Type = b"type",
    InputTokens = b"input_tokens",
    OutputTokens = b"output_tokens",
    InputTokensDetails = b"input_tokens_details",
    OutputTokensDetails = b"output_tokens_details",
    CacheReadInputTokens = b"cache_read_input_tokens",
    CacheCreationInputTokens = b"cache_creation_input_tokens",
    Output = b"output",
    Status = b"status",
    StopReason = b"stop_reason",
    Thinking = b"thinking",
    PartialJson = b"partial_json",
}

impl Key {
    /// Whether some [`Field`]'s path ends in this key (in
    /// [`field_of_known`] or [`field_of_unnested`]): the others hold
    /// containers (`usage`, `choices`) or nothing the layer reads, and a
    /// value under them needs no look-up.
    fn ends_a_field(self) -> bool {
        use Key::*;
        // Every key is listed, so that a new one is sorted when added.
        match self {
            Model
            | Error
            | PromptTokens
            | InputTokens
            | CompletionTokens
            | OutputTokens
            | CachedTokens
            | CacheReadInputTokens
            | CacheCreationInputTokens
            | ReasoningTokens
            | Status
            | StopReason
            | Type
            | FinishReason
            | Text
            | Content
            | ReasoningContent
            | Arguments
            | Delta
            | Thinking
            | PartialJson => true,
            Usage
            | PromptTokensDetails
            | CompletionTokensDetails
            | InputTokensDetails
            | OutputTokensDetails
            | Choices
            | Message
            | ToolCalls
            | Function
            | Response
            | Output
            | Other => false,
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
///
/// Keys and most values are a few bytes long, shorter than what `memchr`'s
/// call and set-up cost: their first 16 bytes are looked at a word at a
/// time here, and only a longer string (content, a prompt) is searched.
#[inline]
fn to_quote_or_escape(rest: &[u8]) -> usize {
    const SHORT: usize = 16;
    let mut at = 0;
    while let Some(word) = rest.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*word);
        let found = bytes_equal_to(word, b'"') | bytes_equal_to(word, b'\\');
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
        if at == SHORT {
            let rest = &rest[at..];
            return at + memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        }
    }
    let tail = &rest[at..];
    at + tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .unwrap_or(tail.len())
}

/// A mask whose lowest set bit is the high bit of the first byte of `word`
/// (little-endian) equal to `byte`; zero when none is. Bits above that one
/// may be set spuriously (a borrow), which is why only the lowest is read.
#[inline]
fn bytes_equal_to(word: u64, byte: u8) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (LOW * u64::from(byte));
    x.wrapping_sub(LOW) & !x & HIGH
}

#[inline]
fn field_of(path: &[Seg]) -> Option<Field> {
    // No field's path ends in an array element or a key the scanner does
    // not know: most values end there, and need no look-up.
    match path.last() {
        Some(Seg::Key(key)) if key.ends_a_field() => field_of_known(path),
        _ => None,
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
/// It holds its state inline in 128 bytes, since one or two are
/// made per request and touched at every piece of its body: a reported
/// string read in one piece is reported where it lies, and only one cut
/// between pieces is copied, into a buffer made the first time.
#[derive(Debug)]
pub(crate) struct JsonScan {
    /// The member each of the outer [`PATH_MAX`] open containers is at.
    path: [Seg; PATH_MAX],
    /// Whether each open container past the outer [`PATH_MAX`] is an
    /// array, a bit a level from the root's (bit 0): what a `,` means and
    /// which bracket closes it, at any depth.
    arrays: u128,
    depth: usize,
    state: State,
    key: [u8; KEY_MAX],
    key_len: usize,
    /// The field of the value being read, if reported.
    field: Option<Field>,
    /// Where in the current piece the string being read starts (0 when it
    /// started in an earlier piece).
    string_start: usize,
    /// What earlier pieces held of a reported string cut between pieces,
    /// at most [`CAPTURE_MAX`] bytes; empty when it started in this one.
    spill: Vec<u8>,
    number: Option<u64>,
    literal: u8,
    /// The field of the current path, once looked up; `None` when the path
    /// changed since.
    member_field: Option<Option<Field>>,
}

impl Default for JsonScan {
    fn default() -> Self {
        JsonScan {
            path: [Seg::Index; PATH_MAX],
            arrays: 0,
            depth: 0,
            state: State::Value,
            key: [0; KEY_MAX],
            key_len: 0,
            field: None,
            string_start: 0,
            spill: Vec::new(),
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
        // A string being read continues from this piece's start.
        self.string_start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match self.state {
                State::Stopped => return,
                State::Str { escape, fresh } => {
                    if fresh {
                        self.string_starts(b, sink);
                    }
                    if escape {
                        self.state = State::Str {
                            escape: false,
                            fresh: false,
                        };
                        i += 1;
                        continue;
                    }
                    i = self.string_rest(bytes, i, sink);
                }
                State::Scalar => i = self.scalar_rest(bytes, i, sink),
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
                State::Value => i = self.value(bytes, i, sink),
                State::ValueOrEnd => {
                    if b == b']' {
                        self.close();
                        i += 1;
                    } else {
                        i = self.value(bytes, i, sink);
                    }
                }
                State::AfterValue => {
                    match (b, self.open()) {
                        (b',', Some(Seg::Index)) => self.state = State::Value,
                        // `,"` as compact JSON writes it: the key at once.
                        (b',', Some(Seg::Key(_))) if bytes.get(i + 1) == Some(&b'"') => {
                            i = self.key(bytes, i + 2, sink);
                            continue;
                        }
                        (b',', Some(Seg::Key(_))) => self.state = State::KeyStart,
                        (b'}', Some(Seg::Key(_))) | (b']', Some(Seg::Index)) => self.close(),
                        _ => self.state = State::Stopped,
                    }
                    i += 1;
                }
                State::KeyOrEnd | State::KeyStart => match b {
                    b'"' => i = self.key(bytes, i + 1, sink),
                    b'}' if self.state == State::KeyOrEnd => {
                        self.close();
                        i += 1;
                    }
                    _ => self.state = State::Stopped,
                },
                State::Key { escape: true } => {
                    self.key_bytes(&[b]);
                    self.state = State::Key { escape: false };
                    i = self.key_rest(bytes, i + 1, sink);
                }
                State::Key { escape: false } => i = self.key_rest(bytes, i, sink),
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
        // A reported string cut here: its bytes so far are kept.
        self.spill_string(bytes);
    }

    /// Starts a key whose opening quote came before `i`; see
    /// [`key_rest`](Self::key_rest).
    #[inline]
    fn key(&mut self, bytes: &[u8], i: usize, sink: &mut impl Sink) -> usize {
        self.key_len = 0;
        self.key_rest(bytes, i, sink)
    }

    /// Reads a key from `i` to its closing quote, and the `:` and the value
    /// after it when they follow at once (compact JSON, where a member is
    /// then read in one turn of [`feed`](Self::feed)'s loop); the index
    /// after what was read.
    #[inline]
    fn key_rest(&mut self, bytes: &[u8], i: usize, sink: &mut impl Sink) -> usize {
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
                    match bytes.get(i + 2) {
                        Some(b) if !b.is_ascii_whitespace() => self.value(bytes, i + 2, sink),
                        _ => i + 2,
                    }
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

    /// Reads a value from its first byte, `bytes[i]`: a string or a number
    /// as far as this piece goes; the index after what was read.
    fn value(&mut self, bytes: &[u8], i: usize, sink: &mut impl Sink) -> usize {
        // The elements of an array share their path: its field is looked
        // up once.
        self.field = match self.member_field {
            Some(field) => field,
            None => {
                let field = self.path.get(..self.depth).and_then(field_of);
                self.member_field = Some(field);
                field
            }
        };
        let b = bytes[i];
        match b {
            b'{' | b'[' => {
                if let Some(field) = self.field.take() {
                    sink.found(field, Found::Other);
                }
                if self.depth == DEPTH_MAX {
                    self.state = State::Stopped;
                    return i + 1;
                }
                let (seg, next) = match b {
                    b'{' => (Seg::Key(Key::Other), State::KeyOrEnd),
                    _ => (Seg::Index, State::ValueOrEnd),
                };
                if let Some(slot) = self.path.get_mut(self.depth) {
                    *slot = seg;
                } else {
                    let bit = 1u128 << self.depth;
                    self.arrays = match seg {
                        Seg::Index => self.arrays | bit,
                        Seg::Key(_) => self.arrays & !bit,
                    };
                }
                self.depth += 1;
                self.member_field = None;
                self.state = next;
                i + 1
            }
            b'"' => {
                self.string_start = i + 1;
                self.spill.clear();
                self.state = State::Str {
                    escape: false,
                    fresh: true,
                };
                match bytes.get(i + 1) {
                    Some(&first) => {
                        self.string_starts(first, sink);
                        self.string_rest(bytes, i + 1, sink)
                    }
                    None => i + 1,
                }
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.number = b.is_ascii_digit().then_some(0);
                self.literal = b;
                self.state = State::Scalar;
                self.scalar_byte(b);
                self.scalar_rest(bytes, i + 1, sink)
            }
            _ => {
                self.state = State::Stopped;
                i + 1
            }
        }
    }

    /// A string's first byte is seen: content is reported at once, by
    /// whether that byte closes it (content's words are never kept).
    #[inline]
    fn string_starts(&mut self, first: u8, sink: &mut impl Sink) {
        if let Some(Field::Content) = self.field {
            sink.found(
                Field::Content,
                Found::Str {
                    bytes: &[],
                    empty: first == b'"',
                },
            );
            self.field = None;
        }
        self.state = State::Str {
            escape: false,
            fresh: false,
        };
    }

    /// Reads a string from `bytes[i]`, not an escaped byte, to its closing
    /// quote or next escape, keeping what the report needs; the index after
    /// what was read.
    fn string_rest(&mut self, bytes: &[u8], i: usize, sink: &mut impl Sink) -> usize {
        let run = to_quote_or_escape(&bytes[i..]);
        let i = i + run;
        match bytes.get(i) {
            Some(b'\\') => {
                self.state = State::Str {
                    escape: true,
                    fresh: false,
                };
            }
            Some(_) => {
                self.state = State::AfterValue;
                if let Some(field) = self.field.take() {
                    let bytes = self.string_to(bytes, i);
                    sink.found(
                        field,
                        Found::Str {
                            bytes,
                            empty: bytes.is_empty(),
                        },
                    );
                    if sink.is_done() {
                        self.state = State::Stopped;
                    }
                }
            }
            None => return i,
        }
        i + 1
    }

    /// Keeps what this piece holds of a reported string cut at its end.
    fn spill_string(&mut self, bytes: &[u8]) {
        if matches!(self.state, State::Str { .. }) && self.field.is_some() {
            let from = self.string_start.min(bytes.len());
            self.keep(&bytes[from..]);
        }
    }

    /// The reported string that ends at `bytes[end]`, as written, cut at
    /// [`CAPTURE_MAX`] bytes.
    fn string_to<'a>(&'a mut self, bytes: &'a [u8], end: usize) -> &'a [u8] {
        let from = self.string_start.min(end);
        let here = &bytes[from..end];
        if self.spill.is_empty() {
            &here[..here.len().min(CAPTURE_MAX)]
        } else {
            self.keep(here);
            &self.spill
        }
    }

    /// Reads a number or literal from `bytes[i]` as far as this piece goes;
    /// the index after it.
    fn scalar_rest(&mut self, bytes: &[u8], mut i: usize, sink: &mut impl Sink) -> usize {
        if self.field.is_none() {
            // A value nobody asked for (an embedding's thousand floats):
            // skip its bytes in one run, and the numbers after it in the
            // same array, which nobody asked for either (the elements of
            // an array share a path).
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
            if run < rest.len() {
                self.literal = 0;
                self.state = State::AfterValue;
            }
            return i + run;
        }
        while let Some(&b) = bytes.get(i) {
            if !is_scalar_byte(b) {
                self.end_scalar(sink);
                self.state = State::AfterValue;
                break;
            }
            self.scalar_byte(b);
            i += 1;
        }
        i
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

    /// Appends to the spilled string, up to [`CAPTURE_MAX`] bytes.
    fn keep(&mut self, bytes: &[u8]) {
        let n = bytes
            .len()
            .min(CAPTURE_MAX.saturating_sub(self.spill.len()));
        self.spill.extend_from_slice(&bytes[..n]);
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
        let top = self.depth.checked_sub(1)?;
        Some(match self.path.get(top) {
            Some(&seg) => seg,
            None if self.arrays >> top & 1 == 1 => Seg::Index,
            None => Seg::Key(Key::Other),
        })
    }

    fn set_member(&mut self, seg: Seg) {
        self.member_field = None;
        if let Some(slot) = self
            .depth
            .checked_sub(1)
            .and_then(|top| self.path.get_mut(top))
        {
            *slot = seg;
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
        // And cut in two anywhere.
        for at in 1..doc.len() {
            let (head, tail) = doc.as_bytes().split_at(at);
            assert_eq!(scan_in(&[head, tail]), whole, "cut at {at}: {doc}");
        }
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
    fn only_the_keys_said_to_end_a_field_end_one() {
        use Key::*;
        let segs: Vec<Seg> = Key::ALL
            .iter()
            .copied()
            .map(Seg::Key)
            .chain([Seg::Index])
            .collect();
        let check = |path: &[Seg]| {
            if field_of_known(path).is_some() {
                assert!(
                    matches!(path.last(), Some(Seg::Key(key)) if key.ends_a_field()),
                    "{path:?} is a field"
                );
            }
        };
        // Every path of up to four members (the last level checked, not
        // kept), and the longer ones under the prefixes of the longest
        // fields, each member in the last place.
        let mut paths: Vec<Vec<Seg>> = vec![vec![]];
        for depth in 1..=4 {
            let mut longer = Vec::new();
            for path in &paths {
                for seg in &segs {
                    let path = [path.as_slice(), &[*seg]].concat();
                    check(&path);
                    if depth < 4 {
                        longer.push(path);
                    }
                }
            }
            paths = longer;
        }
        let (k, i) = (Seg::Key, Seg::Index);
        for prefix in [
            vec![k(Choices), i, k(Delta), k(ToolCalls), i, k(Function)],
            vec![k(Choices), i, k(Message), k(ToolCalls), i],
            vec![k(Output), i, k(Content), i],
            vec![
                k(Response),
                k(Usage),
                k(PromptTokensDetails),
                k(CachedTokens),
            ],
        ] {
            for len in 0..=prefix.len() {
                for last in &segs {
                    check(&[&prefix[..len], &[*last]].concat());
                }
            }
        }
    }

    #[test]
    fn a_reported_string_is_reported_as_written_however_it_is_cut() {
        assert_eq!(
            scan(r#"{"model":"org\/m\"x\\","choices":[{"finish_reason":"\u0073top"}]}"#),
            seen(&[
                (Field::Model, r#"org\/m\"x\\"#),
                (Field::FinishReason, r#"\u0073top"#)
            ])
        );
        let long = format!(
            r#"{{"model":"{}\"{}","usage":{{"prompt_tokens":7}}}}"#,
            "m".repeat(250),
            "n".repeat(300)
        );
        let kept = format!(r#"{}\"{}"#, "m".repeat(250), "n".repeat(4));
        assert_eq!(
            scan(&long),
            seen(&[(Field::Model, &kept), (Field::PromptTokens, "7")])
        );
    }

    #[test]
    fn containers_deeper_than_any_field_are_still_closed_by_their_own_brackets() {
        // Twelve levels of arrays and objects, past the members kept.
        let deep = r#"{"a":[{"b":[{"c":[{"d":[[1,2],{"e":{"f":[{"g":[3]}]}}]}]}]}],"model":"m","usage":{"prompt_tokens":4}}"#;
        assert_eq!(
            scan(deep),
            seen(&[(Field::Model, "m"), (Field::PromptTokens, "4")])
        );
        // A bracket that does not close the container opened at its level,
        // ten levels down: the scan stops there.
        let crossed = r#"{"a":[{"b":[{"c":[{"d":[[{"e":1]]}]}]}]},"model":"m"}"#;
        let (found, stopped) = scan_in(&[crossed.as_bytes()]);
        assert!(found.is_empty() && stopped, "{found:?}");
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
