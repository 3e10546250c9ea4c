//! The traffic of an OpenAI-compatible gateway: each request it serves
//! (what the OpenAI layer records, through `InferenceRequest`) forwarded to
//! a backend (`ModelCall`, with the backend's `server.address`), so that
//! its own series and its per-backend series land side by side.

use nemo_lens::instruments::{InferenceRequest, ModelCall};
use nemo_lens::Meter;

/// Input tokens of each request, as served and as forwarded.
pub const INPUT_TOKENS: u64 = 100;
/// Output tokens of each request, as served and as forwarded.
pub const OUTPUT_TOKENS: u64 = 20;

/// `per_backend` requests of model `llama` to each of `backends`
/// (`10.0.0.0` ...), port 8000, each forwarded once: every request is
/// recorded twice, once as served and once as a call.
pub fn serve(meter: &Meter, backends: u8, per_backend: usize) {
    for backend in 0..backends {
        for _ in 0..per_backend {
            let mut request = InferenceRequest::start(meter)
                .model("llama")
                .input_tokens(INPUT_TOKENS);
            let mut call = ModelCall::start(meter)
                .model("llama")
                .server_address(format!("10.0.0.{backend}"))
                .server_port(8000);
            call.chunk();
            request.first_token();
            request.add_output_tokens(OUTPUT_TOKENS);
            call.input_tokens(INPUT_TOKENS)
                .output_tokens(OUTPUT_TOKENS)
                .finish();
            request.finish();
        }
    }
}
