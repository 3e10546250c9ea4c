//! [`TokenModality`]: the `gen_ai.token.modality` values.

use nemo_lens_macros::AttributeValue;

/// What kind of tokens a usage count is of: `gen_ai.token.modality` on the
/// token counters of the GenAI conventions' current draft (recorded with
/// `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`). `text` when
/// not set.
///
/// The draft lists these values; an enum keeps a value a client sends from
/// turning into a new series.
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
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
