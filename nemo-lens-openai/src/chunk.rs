//! What a streamed chunk carries, found without reading it whole.
//!
//! Most chunks of a stream differ only in a few words of content, and the
//! layer needs little of them: whether they carry content (for the count
//! and the first token's time), the model of the first ones, and the
//! finish reason of the last. Every chunk that generates text has
//! `"finish_reason"`, `null` until the last one, which names a string. A
//! chunk without it (usage after the last, an error) or with another value
//! is read whole by the [`JsonScan`](crate::json::JsonScan). So is a last
//! chunk, and any chunk before the first content, that carries `usage` or
//! an `error`, or more than one finish reason: three searches that a chunk
//! in the middle of the stream is spared. (So usage that a server writes in
//! every chunk, as vLLM's continuous usage stats do, is read from the last
//! one, which has the totals; a stream cut before its last chunk loses
//! them.) For those, two look-ups answer:
//! where the stream's previous ordinary chunk had its finish reason
//! (counted from the end) and its content (from the start), since one
//! serializer writes every chunk of a stream the same way; SIMD searches
//! when that misses. Once a chunk has ended a choice, a miss is read whole
//! without searching. What follows the end of a request's one choice is
//! usage or an error, which the searches would only find not to be words.
//! With several choices, another choice's words written like the ones
//! before still hit, and its last chunk, or words whose finish reason moved
//! with their length, are read whole: slower, never wrong.
//!
//! The Responses and Messages APIs name each event's type instead
//! ([`glance_typed`]): an event of a type that only ever carries generated
//! words is glanced at for its content key; any other is read whole.
//!
//! A key is found only where a JSON key can be: `"content"` inside a string
//! value would be written `\"content\"`, which the search for `"content"`
//! followed by `:` does not match.

use std::sync::LazyLock;

use memchr::memmem::Finder;

struct Keys {
    /// The keys of generated text: content, completions' text, reasoning,
    /// a tool call's arguments.
    content: [Finder<'static>; 4],
    finish_reason: Finder<'static>,
    event_type: Finder<'static>,
    model: Finder<'static>,
    /// What a last chunk may carry besides words, which only reading it
    /// whole reports.
    more: [Finder<'static>; 2],
}

static KEYS: LazyLock<Keys> = LazyLock::new(|| Keys {
    content: [
        Finder::new(b"\"content\""),
        Finder::new(b"\"text\""),
        Finder::new(b"\"reasoning_content\""),
        Finder::new(b"\"arguments\""),
    ],
    finish_reason: Finder::new(b"\"finish_reason\""),
    event_type: Finder::new(b"\"type\""),
    model: Finder::new(b"\"model\""),
    more: [Finder::new(b"\"usage\""), Finder::new(b"\"error\"")],
});

/// What the searches say of one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Glance<'a> {
    /// An ordinary chunk: more words, or none.
    Words { content: bool },
    /// The last chunk of a choice: its words and its finish reason, as
    /// written between the quotes.
    Last { content: bool, reason: &'a [u8] },
    /// A chunk that may carry more than words: read it whole.
    More,
}

/// Where the keys sat in the stream's previous ordinary chunk.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// Bytes from `"finish_reason"` to the chunk's end.
    finish_from_end: Option<usize>,
    /// Which content key, and its offset from the chunk's start.
    content_at: Option<(usize, usize)>,
    /// The offset of a typed event's `"type"` from its start.
    type_at: Option<usize>,
    /// Whether a chunk of the stream ended a choice. What follows it is
    /// usage, an error, or another choice's words: a chunk whose finish
    /// reason is not where the ordinary chunks (reason `null`) had it is
    /// read whole, without the search that would only find it missing (a
    /// usage chunk).
    ended: bool,
}

/// Glances at one chunk's JSON, `layout` remembering where its keys were;
/// `first`: no content came before it (see the module docs).
pub(crate) fn glance<'a>(chunk: &'a [u8], layout: &mut Layout, first: bool) -> Glance<'a> {
    let keys = &*KEYS;
    let finish = layout
        .finish_from_end
        .and_then(|back| {
            let at = chunk.len().checked_sub(back)?;
            Some((at, value_at(chunk, at, &keys.finish_reason)?))
        })
        .or_else(|| {
            if layout.ended {
                return None;
            }
            let (at, value) = first_value(chunk, &keys.finish_reason)?;
            // The ordinary chunks' place, whose reason is null: a last
            // chunk's moves with its reason's length.
            if value.starts_with(b"null") {
                layout.finish_from_end = Some(chunk.len() - at);
            }
            Some((at, value))
        });
    let reason = match finish {
        Some((at, value)) if value.starts_with(b"null") => {
            if first && !is_plain(chunk, at) {
                return Glance::More;
            }
            None
        }
        Some((at, value)) => match plain_string(value) {
            Some(reason) if is_plain(chunk, at) => Some(reason),
            _ => return Glance::More,
        },
        None => return Glance::More,
    };
    let content = has_content(chunk, &keys.content, layout);
    match reason {
        Some(reason) => {
            layout.ended = true;
            Glance::Last { content, reason }
        }
        None => Glance::Words { content },
    }
}

/// Whether the finish reason at `at` is the chunk's only one (one choice),
/// and the chunk carries no `usage` and no `error` (a server that reports
/// usage in every chunk, or fails as it ends).
fn is_plain(chunk: &[u8], at: usize) -> bool {
    let keys = &*KEYS;
    let mut reasons = keys.finish_reason.find_iter(chunk);
    let only = reasons.next() == Some(at) && reasons.next().is_none();
    only && keys
        .more
        .iter()
        .all(|key| first_value(chunk, key).is_none_or(|(_, value)| value.starts_with(b"null")))
}

/// Whether one of a chunk's content keys holds a non-empty string.
#[inline(always)]
fn has_content(chunk: &[u8], candidates: &[Finder<'static>], layout: &mut Layout) -> bool {
    if let Some((key, at)) = layout.content_at
        && let Some(value) = candidates.get(key).and_then(|k| value_at(chunk, at, k))
        && non_empty_string(value)
    {
        return true;
    }
    for (i, key) in candidates.iter().enumerate() {
        if let Some(at) = find_value(chunk, key, non_empty_string) {
            layout.content_at = Some((i, at));
            return true;
        }
    }
    false
}

/// A chunk's `model`, as written between the quotes: its first `"model"`
/// key, when no object or array opens before it but the chunk's own (so
/// the key is the chunk's, not a nested one's). `None` when it has none,
/// or one that only reading the chunk whole reports as the scanner would
/// (after a nested object, with escapes, or longer than it keeps).
pub(crate) fn model(chunk: &[u8]) -> Option<&[u8]> {
    let (at, value) = first_value(chunk, &KEYS.model)?;
    if memchr::memchr2_iter(b'{', b'[', &chunk[..at]).count() != 1 {
        return None;
    }
    plain_string(value).filter(|model| model.len() <= crate::json::CAPTURE_MAX)
}

/// The string a value starts with, between its quotes, when it has no
/// escape.
fn plain_string(value: &[u8]) -> Option<&[u8]> {
    let inner = value.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', inner)?;
    (inner[end] == b'"').then(|| &inner[..end])
}

/// What one API's typed events are, for [`glance_typed`].
#[derive(Debug)]
pub(crate) struct TypedEvents {
    /// The event types that carry generated words and nothing else.
    pub words: &'static [&'static [u8]],
    /// The keys of the words in those events.
    pub content: &'static [Finder<'static>],
}

/// Glances at one typed event's JSON: an event with a `"type"` key naming
/// one of `events.words` is words (content when one of its content keys
/// holds a non-empty string); any other is read whole. Its type key may
/// come first (as the APIs write) or last (as serializers that sort keys
/// write), after a nested object's: a nested `type` never names an event
/// (it is `text_delta`, `message`, `output_text`...), so whichever key
/// names a word event is the event's. As for chunks, where the previous
/// event had its keys is tried first.
pub(crate) fn glance_typed<'a>(
    event: &'a [u8],
    events: &TypedEvents,
    layout: &mut Layout,
) -> Glance<'a> {
    let keys = &*KEYS;
    let names_words = |value: &[u8]| {
        events.words.iter().any(|name| {
            value
                .strip_prefix(b"\"")
                .and_then(|v| v.strip_prefix(*name))
                .is_some_and(|v| v.starts_with(b"\""))
        })
    };
    let cached = layout
        .type_at
        .and_then(|at| value_at(event, at, &keys.event_type))
        .is_some_and(names_words);
    if !cached {
        match find_value(event, &keys.event_type, names_words) {
            Some(at) => layout.type_at = Some(at),
            None => return Glance::More,
        }
    }
    Glance::Words {
        content: has_content(event, events.content, layout),
    }
}

/// The value of `"key":` when the key is exactly at `at`.
fn value_at<'a>(chunk: &'a [u8], at: usize, key: &Finder<'static>) -> Option<&'a [u8]> {
    let rest = chunk.get(at..)?.strip_prefix(key.needle())?;
    after_colon(rest)
}

/// The offset and value of the first `"key":` of `chunk`.
fn first_value<'a>(chunk: &'a [u8], key: &Finder<'static>) -> Option<(usize, &'a [u8])> {
    let mut from = 0;
    while let Some(at) = key.find(&chunk[from..]) {
        let at = from + at;
        let end = at + key.needle().len();
        if let Some(value) = after_colon(&chunk[end..]) {
            return Some((at, value));
        }
        from = end;
    }
    None
}

/// The offset of the first `"key":` of `chunk` whose value `test` accepts.
fn find_value(chunk: &[u8], key: &Finder<'static>, test: impl Fn(&[u8]) -> bool) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = key.find(&chunk[from..]) {
        let at = from + at;
        let end = at + key.needle().len();
        if after_colon(&chunk[end..]).is_some_and(&test) {
            return Some(at);
        }
        from = end;
    }
    None
}

/// What follows `:` (and spaces around it) at the start of `bytes`, when
/// it starts with one: the quoted string before it was a key.
#[inline]
fn after_colon(bytes: &[u8]) -> Option<&[u8]> {
    let bytes = skip_space(bytes);
    let (b':', rest) = bytes.split_first()? else {
        return None;
    };
    Some(skip_space(rest))
}

#[inline]
fn skip_space(mut bytes: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\n' | b'\r', rest @ ..] = bytes {
        bytes = rest;
    }
    bytes
}

fn non_empty_string(value: &[u8]) -> bool {
    matches!(value, [b'"', next, ..] if *next != b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_chunk_is_words_with_or_without_content() {
        let chunk = br#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}"#;
        assert_eq!(
            glance(chunk, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
        let spaced =
            br#"{"choices": [{"index": 0, "delta": {"content": " word"}, "finish_reason": null}]}"#;
        assert_eq!(
            glance(spaced, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
        let completion = br#"{"choices":[{"text":"x","finish_reason":null}]}"#;
        assert_eq!(
            glance(completion, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
        let reasoning = br#"{"choices":[{"delta":{"content":null,"reasoning_content":"hmm"},"finish_reason":null}]}"#;
        assert_eq!(
            glance(reasoning, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
        let role =
            br#"{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
        assert_eq!(
            glance(role, &mut Layout::default(), false),
            Glance::Words { content: false }
        );
    }

    #[test]
    fn a_last_chunk_is_glanced_unless_it_carries_more() {
        let last = br#"{"choices":[{"delta":{"content":"."},"finish_reason":"stop"}]}"#;
        assert_eq!(
            glance(last, &mut Layout::default(), false),
            Glance::Last {
                content: true,
                reason: b"stop"
            }
        );
        let spaced = br#"{"choices": [{"delta": {}, "finish_reason" : "length"}], "usage": null}"#;
        assert_eq!(
            glance(spaced, &mut Layout::default(), false),
            Glance::Last {
                content: false,
                reason: b"length"
            }
        );
        // Usage in the last chunk (vLLM's continuous usage stats), an error,
        // two choices ending together, a reason with an escape: read whole.
        let more: [&[u8]; 5] = [
            br#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}"#,
            br#"{"usage": {"completion_tokens":2},"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
            br#"{"choices":[{"delta":{},"finish_reason":"stop"}],"error":{"message":"boom"}}"#,
            br#"{"choices":[{"index":0,"finish_reason":"stop"},{"index":1,"finish_reason":"length"}]}"#,
            br#"{"choices":[{"delta":{},"finish_reason":"st\"op"}]}"#,
        ];
        for chunk in more {
            assert_eq!(
                glance(chunk, &mut Layout::default(), false),
                Glance::More,
                "{}",
                String::from_utf8_lossy(chunk)
            );
        }
        // Words that name the keys are not keys.
        let quoted = br#"{"choices":[{"delta":{"content":"\"usage\": \"error\":"},"finish_reason":"stop"}]}"#;
        assert_eq!(
            glance(quoted, &mut Layout::default(), false),
            Glance::Last {
                content: true,
                reason: b"stop"
            }
        );
    }

    #[test]
    fn usage_after_the_last_or_an_error_is_read_whole() {
        let usage = br#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
        assert_eq!(glance(usage, &mut Layout::default(), false), Glance::More);
        let error = br#"{"error":{"message":"boom"}}"#;
        assert_eq!(glance(error, &mut Layout::default(), false), Glance::More);
        let odd = br#"{"choices":[{"delta":{},"finish_reason":7}]}"#;
        assert_eq!(glance(odd, &mut Layout::default(), false), Glance::More);
    }

    #[test]
    fn before_the_first_content_any_chunk_that_may_carry_more_is_read_whole() {
        // vLLM's role chunk with continuous usage stats; an error beside
        // words; two choices in one chunk.
        let more: [&[u8]; 3] = [
            br#"{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":{"prompt_tokens":7}}"#,
            br#"{"choices":[{"delta":{"content":"x"},"finish_reason":null}],"error":{"message":"boom"}}"#,
            br#"{"choices":[{"index":0,"delta":{},"finish_reason":null},{"index":1,"delta":{},"finish_reason":"stop"}]}"#,
        ];
        for chunk in more {
            let text = String::from_utf8_lossy(chunk);
            assert_eq!(
                glance(chunk, &mut Layout::default(), true),
                Glance::More,
                "{text}"
            );
        }
        // Without them, the first chunks are glanced at like the others.
        let role = br#"{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#;
        assert_eq!(
            glance(role, &mut Layout::default(), true),
            Glance::Words { content: false }
        );
    }

    #[test]
    fn the_model_is_the_first_model_key_s_plain_string() {
        let chunk = br#"{"id":"c","model":"llama-3","choices":[{"delta":{"content":"x"},"finish_reason":null}]}"#;
        assert_eq!(model(chunk), Some(&b"llama-3"[..]));
        assert_eq!(model(br#"{"model" : "a/b", "x": 1}"#), Some(&b"a/b"[..]));
        // None where only the scanner reads it as it would: no model, not a
        // string, an escape, longer than the scanner keeps, a key in words.
        let long = format!(
            r#"{{"model":"{}"}}"#,
            "m".repeat(crate::json::CAPTURE_MAX + 1)
        );
        let none: [&[u8]; 7] = [
            // A nested object's model first, or any object or array before
            // the model: whose it is, only the scanner knows.
            br#"{"choices":[{"x":{"model":"a"}}],"model":"b"}"#,
            br#"{"choices":[],"model":"b"}"#,
            br#"{"choices":[]}"#,
            br#"{"model":null}"#,
            br#"{"model":"a\/b"}"#,
            long.as_bytes(),
            br#"{"choices":[{"delta":{"content":"\"model\":\"x\""}}]}"#,
        ];
        for chunk in none {
            assert_eq!(model(chunk), None, "{}", String::from_utf8_lossy(chunk));
        }
    }

    #[test]
    fn keys_inside_strings_are_not_keys() {
        // The words "finish_reason" and "content" quoted in generated text.
        let chunk = br#"{"choices":[{"delta":{"content":"the \"finish_reason\": \"\" field"},"finish_reason":null}]}"#;
        assert_eq!(
            glance(chunk, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
        // Logprobs carry a "content" array: not text.
        let logprobs =
            br#"{"choices":[{"delta":{},"logprobs":{"content":[]},"finish_reason":null}]}"#;
        assert_eq!(
            glance(logprobs, &mut Layout::default(), false),
            Glance::Words { content: false }
        );
    }

    #[test]
    fn the_layout_of_the_previous_chunk_is_tried_first_and_a_miss_searches() {
        let mut layout = Layout::default();
        let a =
            br#"{"choices":[{"delta":{"content":" a"},"finish_reason":null,"index":0}],"id":"c1"}"#;
        assert_eq!(
            glance(a, &mut layout, false),
            Glance::Words { content: true }
        );
        assert!(layout.finish_from_end.is_some() && layout.content_at.is_some());
        // Longer content: the finish reason moved from the start, not from the end.
        let b = br#"{"choices":[{"delta":{"content":" longer words"},"finish_reason":null,"index":0}],"id":"c1"}"#;
        assert_eq!(
            glance(b, &mut layout, false),
            Glance::Words { content: true }
        );
        // Another layout altogether: the searches find it.
        let d = br#"{"id": "c2", "choices": [{"index": 0, "finish_reason": null, "delta": {"content": ""}}]}"#;
        assert_eq!(
            glance(d, &mut layout, false),
            Glance::Words { content: false }
        );
        let e = br#"{"id": "c2", "choices": [{"index": 0, "finish_reason": null, "delta": {"content": "x"}}]}"#;
        assert_eq!(
            glance(e, &mut layout, false),
            Glance::Words { content: true }
        );
        // The last chunk: same layout, another value.
        let c = br#"{"id": "c2", "choices": [{"index": 0, "finish_reason": "stop", "delta": {"content": "."}}]}"#;
        assert_eq!(
            glance(c, &mut layout, false),
            Glance::Last {
                content: true,
                reason: b"stop"
            }
        );
    }

    #[test]
    fn after_a_choice_ends_only_the_same_layout_is_glanced_at() {
        let mut layout = Layout::default();
        let words =
            br#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"id":"c"}"#;
        let last = br#"{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"length"}],"id":"c"}"#;
        assert_eq!(
            glance(words, &mut layout, false),
            Glance::Words { content: true }
        );
        let ordinary = layout.finish_from_end;
        assert_eq!(
            glance(last, &mut layout, false),
            Glance::Last {
                content: true,
                reason: b"length"
            }
        );
        // The last chunk's reason sits elsewhere: the ordinary chunks'
        // place is kept.
        assert_eq!(layout.finish_from_end, ordinary);
        // Another choice's words, written the same way: still glanced at.
        let other =
            br#"{"choices":[{"index":1,"delta":{"content":"z"},"finish_reason":null}],"id":"c"}"#;
        assert_eq!(
            glance(other, &mut layout, false),
            Glance::Words { content: true }
        );
        // Written another way: read whole, as is the usage after the last.
        let moved =
            br#"{"id":"c","choices":[{"index":1,"finish_reason":null,"delta":{"content":"z"}}]}"#;
        assert_eq!(glance(moved, &mut layout, false), Glance::More);
        let usage = br#"{"choices":[],"id":"c","usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
        assert_eq!(glance(usage, &mut layout, false), Glance::More);
        // A stream that has not ended finds a moved finish reason.
        assert_eq!(
            glance(moved, &mut Layout::default(), false),
            Glance::Words { content: true }
        );
    }
}
