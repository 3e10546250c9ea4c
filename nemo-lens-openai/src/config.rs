//! What every recording of one layer shares: the meter, the declared
//! models and the server's attributes, set through
//! [`OpenAiLayer`](crate::OpenAiLayer)'s builder.

use nemo_lens_core::Meter;
use nemo_lens_instruments::TokenModality;
use opentelemetry::StringValue;

use crate::UNDECLARED_MODEL;

/// What every recording of one layer shares.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub meter: Meter,
    /// The declared models, as attribute values.
    pub models: Vec<StringValue>,
    pub provider_name: StringValue,
    pub server_address: Option<StringValue>,
    pub server_port: Option<u16>,
    /// Whether to count responses by finish reason.
    pub count_finished: bool,
    pub token_modality: TokenModality,
}

impl Config {
    /// The index of a `model` as written in a body (escapes included: no
    /// model name needs one) among the declared models.
    pub(crate) fn model_index(&self, written: &[u8]) -> Option<usize> {
        self.models
            .iter()
            .position(|m| m.as_str().as_bytes() == written)
    }

    /// The attribute value for a `model` as written in a body.
    pub(crate) fn model(&self, written: &[u8]) -> StringValue {
        match self.model_index(written) {
            Some(i) => self.models[i].clone(),
            None => StringValue::from(UNDECLARED_MODEL),
        }
    }
}
