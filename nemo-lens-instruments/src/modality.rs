//! [`TokenModality`]: the `gen_ai.token.modality` values.

use crate::wire_enum::wire_enum;

/// What kind of tokens a usage count is of: `gen_ai.token.modality` on the
/// token counters of the GenAI conventions' current draft (recorded with
/// `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`). `text` when
/// not set.
///
/// The draft lists these values; an enum keeps a value a client sends from
/// turning into a new series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TokenModality {
    /// Text tokens.
    #[default]
    Text,
    /// Image tokens.
    Image,
    /// Audio tokens.
    Audio,
    /// The provider does not break usage down by modality.
    Unknown,
}

wire_enum!(TokenModality {
    Text => "text",
    Image => "image",
    Audio => "audio",
    Unknown => "unknown",
});
