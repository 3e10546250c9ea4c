//! Anthropic's Messages API (`POST .../messages`): which of its streamed
//! events carry only words, and how its input tokens add up. The values
//! themselves are found by the [`JsonScan`](crate::json::JsonScan)
//! (`message_start`'s `message.usage` and `message.model`, `message_delta`'s
//! `usage` and `delta.stop_reason`, an `error` event's `error`).

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::chunk::{glance_typed, Glance, Layout, TypedEvents};

/// The event types that carry words or nothing: a content block's delta
/// (text, thinking, a tool call's partial JSON) and keep-alive pings.
const WORDS: &[&[u8]] = &[b"content_block_delta", b"ping"];

static CONTENT: LazyLock<[Finder<'static>; 3]> = LazyLock::new(|| {
    [
        Finder::new(b"\"text\""),
        Finder::new(b"\"thinking\""),
        Finder::new(b"\"partial_json\""),
    ]
});

static EVENTS: LazyLock<TypedEvents> = LazyLock::new(|| TypedEvents {
    words: WORDS,
    content: &*CONTENT,
});

/// Glances at one streamed event; see [`glance_typed`].
pub(crate) fn glance<'a>(event: &'a [u8], layout: &mut Layout) -> Glance<'a> {
    glance_typed(event, &EVENTS, layout)
}

/// The input tokens of a message, as the GenAI conventions count them
/// (cached ones included): Anthropic's `input_tokens` leaves out the
/// tokens read from and written to its prompt cache.
pub(crate) fn input_tokens(
    uncached: Option<u64>,
    read: Option<u64>,
    written: Option<u64>,
) -> Option<u64> {
    if uncached.is_none() && read.is_none() && written.is_none() {
        return None;
    }
    Some(
        [uncached, read, written]
            .into_iter()
            .flatten()
            .fold(0u64, u64::saturating_add),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_and_pings_are_words_and_other_events_are_read_whole() {
        let text = br#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" word"}}"#;
        assert_eq!(
            glance(text, &mut Layout::default()),
            Glance::Words { content: true }
        );
        let json = br#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}}"#;
        assert_eq!(
            glance(json, &mut Layout::default()),
            Glance::Words { content: true }
        );
        let signature = br#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#;
        assert_eq!(
            glance(signature, &mut Layout::default()),
            Glance::Words { content: false }
        );
        // Keys sorted (serde_json's default): the delta's type first.
        let sorted =
            br#"{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}"#;
        assert_eq!(
            glance(sorted, &mut Layout::default()),
            Glance::Words { content: true }
        );
        assert_eq!(
            glance(br#"{"type": "ping"}"#, &mut Layout::default()),
            Glance::Words { content: false }
        );
        for other in [
            &br#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#[..],
            br#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#,
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ] {
            assert_eq!(glance(other, &mut Layout::default()), Glance::More);
        }
    }

    #[test]
    fn cached_tokens_are_input_tokens() {
        assert_eq!(input_tokens(Some(3), Some(10), Some(2)), Some(15));
        assert_eq!(input_tokens(Some(3), None, None), Some(3));
        assert_eq!(input_tokens(None, None, None), None);
    }
}
