//! [`OpenAiService`]: the layer's service, and its response future.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use http::{Request, Response};
use pin_project_lite::pin_project;
use tower_service::Service;

use crate::body::{MeteredBody, ModelScan, RequestBody};
use crate::config::Config;
use crate::recording::{FromRequest, Operation, Recording};

/// The service [`OpenAiLayer`](crate::OpenAiLayer) wraps around yours.
#[derive(Debug, Clone)]
pub struct OpenAiService<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> OpenAiService<S> {
    pub(crate) fn new(inner: S, config: Arc<Config>) -> Self {
        OpenAiService { inner, config }
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for OpenAiService<S>
where
    S: Service<Request<RequestBody<ReqBody>>, Response = Response<ResBody>>,
    ResBody: http_body::Body,
{
    type Response = Response<MeteredBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let operation = Operation::of(request.method(), request.uri().path())
            .filter(|_| self.config.meter.is_enabled());
        let (recording, scan) = match operation {
            Some(operation) => {
                let from_request = FromRequest::new(Arc::clone(&self.config));
                let recording = Recording::start(operation, Arc::clone(&from_request));
                let scan = ModelScan::new(from_request);
                (Some(recording), Some(scan))
            }
            None => (None, None),
        };
        let request = request.map(|body| RequestBody::new(body, scan));
        ResponseFuture {
            inner: self.inner.call(request),
            recording,
        }
    }
}

pin_project! {
    /// The response of an [`OpenAiService`]: yours, with its body metered.
    /// Dropped before it resolves (the client went away while the handler
    /// ran), it records the request as cancelled.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        recording: Option<Box<Recording>>,
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: http_body::Body,
{
    type Output = Result<Response<MeteredBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.inner.poll(cx));
        let mut recording = this.recording.take();
        Poll::Ready(match result {
            Ok(response) => {
                let (head, body) = response.into_parts();
                if let Some(recording) = recording.as_mut() {
                    recording.response(&head);
                }
                let declared = head
                    .headers
                    .get(http::header::CONTENT_LENGTH)
                    .and_then(|v| v.to_str().ok()?.parse().ok());
                Ok(Response::from_parts(
                    head,
                    MeteredBody::new(body, recording, declared),
                ))
            }
            Err(error) => {
                if let Some(recording) = recording {
                    recording.fail(nemo_lens_instruments::DROPPED_ERROR_TYPE);
                }
                Err(error)
            }
        })
    }
}
