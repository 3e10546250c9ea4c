//! [`OpenAiLayer`]: what the layer records with, chosen by the server.

use std::sync::Arc;

use nemo_lens_core::Meter;
use nemo_lens_instruments::TokenModality;
use opentelemetry::StringValue;
use tower_layer::Layer;

use crate::config::Config;
use crate::service::OpenAiService;

/// The `gen_ai.request.model` (and `gen_ai.response.model`) value of every
/// model the server did not declare with [`OpenAiLayer::models`]: the
/// `model` of a request body is the client's choice, so only declared
/// names become attribute values and no client can create series.
pub const UNDECLARED_MODEL: &str = "_OTHER";

/// A tower layer that records the GenAI server metrics of an
/// OpenAI-compatible API: `POST .../chat/completions`,
/// `POST .../completions`, `POST .../responses` (OpenAI's Responses API)
/// and `POST .../messages` (Anthropic's Messages API), streamed (SSE) or
/// not, and `POST .../embeddings`, without the handler's help.
///
/// `gen_ai.operation.name` is `chat` for chat completions, Responses and
/// Messages, `text_completion` for completions and `embeddings` for
/// embeddings (the well-known values of the GenAI semantic conventions
/// v1.41.1). An embedding records its duration and input tokens only.
///
/// For each such request it records, through
/// [`InferenceRequest`](nemo_lens_instruments::InferenceRequest):
///
/// - the request duration, from the request's arrival to the end of its
///   response body;
/// - for a streamed response, the time to the first chunk that carries
///   content and the time per output token after it, up to the last chunk
///   that carries content (not a later usage chunk or `[DONE]`);
/// - input, output, cached and reasoning token counts from the response's
///   `usage` when it has one (else, for a stream, the content chunks it
///   counted as the output tokens);
/// - `gen_ai.request.model` from the request body and
///   `gen_ai.response.model` from the response, each the declared model or
///   [`UNDECLARED_MODEL`];
/// - `error.type` on the duration: the status code (`404`, `429`, `500`)
///   of an error response, `cancelled` when the client went away before
///   the response ended, `error_event` for an `error` in a body or a
///   stream (a Responses `response.failed` or `error` event, a Messages
///   `error` event).
///
/// Bodies are read as they pass, never buffered: the request body's
/// `model` as the handler reads it, the response's chunks as they are sent.
/// Other paths and methods pass through untouched, as does everything on a
/// meter that records nothing. Put the layer inside any compression layer:
/// a compressed body is timed but not read.
///
/// ```
/// use axum::{routing::post, Router};
/// use nemo_lens::openai::OpenAiLayer;
/// use nemo_lens::Meter;
///
/// # async fn chat() -> &'static str { "" }
/// let meter = Meter::noop(); // telemetry.meter, from setup_telemetry
/// let app: Router = Router::new()
///     .route("/v1/chat/completions", post(chat))
///     .layer(OpenAiLayer::new(&meter).models(["llama-3-8b"]).provider_name("nemo"));
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiLayer {
    config: Arc<Config>,
}

impl OpenAiLayer {
    /// Records on `meter`, with no model declared yet (every request is
    /// recorded under [`UNDECLARED_MODEL`] until [`models`](Self::models)
    /// names those the server serves) and `gen_ai.provider.name` `nemo`.
    pub fn new(meter: &Meter) -> Self {
        OpenAiLayer {
            config: Arc::new(Config {
                meter: meter.clone(),
                models: Vec::new(),
                provider_name: StringValue::from("nemo"),
                server_address: None,
                server_port: None,
                count_finished: false,
                token_modality: TokenModality::Text,
            }),
        }
    }

    fn config(mut self, change: impl FnOnce(&mut Config)) -> Self {
        change(Arc::make_mut(&mut self.config));
        self
    }

    /// Declares the models the server serves: their names become
    /// `gen_ai.request.model` values; any other is [`UNDECLARED_MODEL`].
    pub fn models<I, M>(self, models: I) -> Self
    where
        I: IntoIterator<Item = M>,
        M: Into<String>,
    {
        self.config(|c| {
            c.models.extend(
                models
                    .into_iter()
                    .map(|m| StringValue::from(Arc::<str>::from(m.into()))),
            )
        })
    }

    /// `gen_ai.provider.name` (default `nemo`), e.g. `vllm`.
    pub fn provider_name(self, name: impl Into<String>) -> Self {
        let name = StringValue::from(name.into());
        self.config(|c| c.provider_name = name)
    }

    /// `server.address`, for servers behind several addresses.
    pub fn server_address(self, address: impl Into<String>) -> Self {
        let address = StringValue::from(address.into());
        self.config(|c| c.server_address = Some(address))
    }

    /// `server.port`.
    pub fn server_port(self, port: u16) -> Self {
        self.config(|c| c.server_port = Some(port))
    }

    /// `gen_ai.token.modality` of the token counters recorded with the GenAI
    /// draft's names (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`):
    /// `text` by default, for a text-only server; the layer cannot tell a
    /// multimodal prompt's tokens apart, so a server taking images or audio
    /// says [`TokenModality::Unknown`], as the conventions advise.
    pub fn token_modality(self, modality: TokenModality) -> Self {
        self.config(|c| c.token_modality = modality)
    }

    /// Counts each response by its finish reason in
    /// `nemo.inference.requests.finished`
    /// ([`SchedulingMetrics`](nemo_lens_instruments::serving::SchedulingMetrics)):
    /// for a router or gateway, which has no
    /// [`ScheduledRequest`](nemo_lens_instruments::serving::ScheduledRequest)
    /// behind it. An engine that uses `ScheduledRequest` leaves this off, or
    /// every request would be counted twice. `stop`, `tool_calls`,
    /// `function_call` and `content_filter` count as `stop`; a client that
    /// went away as `abort`; an error response as `error`.
    pub fn count_finish_reasons(self, count: bool) -> Self {
        self.config(|c| c.count_finished = count)
    }
}

#[cfg(test)]
impl OpenAiLayer {
    pub(crate) fn config_for_tests(&self) -> Arc<Config> {
        Arc::clone(&self.config)
    }
}

impl<S> Layer<S> for OpenAiLayer {
    type Service = OpenAiService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        OpenAiService::new(inner, Arc::clone(&self.config))
    }
}
