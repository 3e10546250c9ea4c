//! [`TokenModality`]: the `gen_ai.token.modality` values.

use lens_core::{AttributeValue, KeyPart};
use opentelemetry::Value;

/// What kind of tokens a usage count is of: `gen_ai.token.modality` on the
/// token counters of the GenAI conventions' current draft (recorded with
/// `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`). `text` when
/// not set.
///
/// The draft lists these values; an enum keeps a value a client sends from
/// turning into a new series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TokenModality {
    /// `text`.
    #[default]
    Text,
    /// `image`.
    Image,
    /// `audio`.
    Audio,
    /// `unknown`: the provider does not break usage down by modality.
    Unknown,
}

impl TokenModality {
    /// The attribute value, e.g. `text`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenModality::Text => "text",
            TokenModality::Image => "image",
            TokenModality::Audio => "audio",
            TokenModality::Unknown => "unknown",
        }
    }
}

impl AttributeValue for TokenModality {
    #[inline]
    fn key_part(&self) -> Option<KeyPart<'_>> {
        Some(KeyPart::Str(self.as_str()))
    }

    fn to_value(&self) -> Option<Value> {
        Some(Value::from(self.as_str()))
    }
}
