//! OpenAI's Responses API (`POST .../responses`): which of its streamed
//! events carry only words, and what a response's `status` says of how it
//! ended. The values themselves are found by the
//! [`JsonScan`](crate::json::JsonScan) (`response.usage`, `response.model`,
//! `response.error`, the events' `type`).

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::chunk::{glance_typed, Glance, Layout, TypedEvents};

/// The event types that stream generated words (text, reasoning, a tool
/// call's arguments, a refusal), each in its `delta`.
const WORDS: &[&[u8]] = &[
    b"response.output_text.delta",
    b"response.reasoning_text.delta",
    b"response.reasoning_summary_text.delta",
    b"response.function_call_arguments.delta",
    b"response.refusal.delta",
];

static CONTENT: LazyLock<[Finder<'static>; 1]> = LazyLock::new(|| [Finder::new(b"\"delta\"")]);

static EVENTS: LazyLock<TypedEvents> = LazyLock::new(|| TypedEvents {
    words: WORDS,
    content: &*CONTENT,
});

/// Glances at one streamed event; see [`glance_typed`].
pub(crate) fn glance<'a>(event: &'a [u8], layout: &mut Layout) -> Glance<'a> {
    glance_typed(event, &EVENTS, layout)
}

/// The event types that report a failure: `response.failed` (the response
/// object's `error` says why) and a bare `error` event.
pub(crate) fn is_error_event(event_type: &[u8]) -> bool {
    matches!(event_type, b"response.failed" | b"error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_are_words_and_other_events_are_read_whole() {
        let delta = br#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":" word","sequence_number":4}"#;
        assert_eq!(
            glance(delta, &mut Layout::default()),
            Glance::Words { content: true }
        );
        let empty = br#"{"type":"response.output_text.delta","delta":"","sequence_number":4}"#;
        assert_eq!(
            glance(empty, &mut Layout::default()),
            Glance::Words { content: false }
        );
        // vLLM's pydantic models write `type` last.
        let last = br#"{"content_index":0,"delta":"x","item_id":"m","output_index":0,"sequence_number":3,"type":"response.reasoning_text.delta"}"#;
        assert_eq!(
            glance(last, &mut Layout::default()),
            Glance::Words { content: true }
        );
        // One layout through a stream: kept while events keep it, searched
        // again when they do not.
        let mut layout = Layout::default();
        assert_eq!(glance(delta, &mut layout), Glance::Words { content: true });
        assert_eq!(glance(empty, &mut layout), Glance::Words { content: false });
        assert_eq!(glance(last, &mut layout), Glance::Words { content: true });
        let done = br#"{"type":"response.completed","response":{"usage":{"input_tokens":3}}}"#;
        assert_eq!(glance(done, &mut layout), Glance::More);
        for other in [
            &br#"{"type":"response.completed","response":{"usage":{"input_tokens":3}}}"#[..],
            br#"{"type":"response.output_text.done","text":"all of it"}"#,
            br#"{"type":"error","code":"server_error","message":"boom"}"#,
            br#"{"delta":"x"}"#,
        ] {
            assert_eq!(glance(other, &mut Layout::default()), Glance::More);
        }
    }
}
