//! The request and response bodies the layer reads as they pass.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Buf;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::json::{Field, Found, JsonScan, Sink};
use crate::layer::Config;
use crate::recording::{store_model, ModelSlot, Recording, BODY_ERROR, CANCELLED};

/// Calls `read` with each contiguous piece of `data`.
fn each_piece(data: &impl Buf, mut read: impl FnMut(&[u8])) {
    let mut pieces = [std::io::IoSlice::new(&[]); 8];
    let filled = data.chunks_vectored(&mut pieces);
    for piece in &pieces[..filled] {
        read(piece);
    }
}

/// The request body's `model`, found as the handler reads the body.
#[derive(Debug)]
pub(crate) struct ModelScan {
    config: Arc<Config>,
    slot: ModelSlot,
    scan: JsonScan,
}

impl ModelScan {
    pub(crate) fn new(config: Arc<Config>, slot: ModelSlot) -> Self {
        ModelScan {
            config,
            slot,
            scan: JsonScan::default(),
        }
    }
}

struct ModelSink<'a> {
    config: &'a Config,
    slot: &'a ModelSlot,
    found: bool,
}

impl Sink for ModelSink<'_> {
    fn found(&mut self, field: Field, value: Found<'_>) {
        if let (Field::Model, Found::Str { bytes, .. }) = (field, value) {
            store_model(self.config, self.slot, bytes);
            self.found = true;
        }
    }
}

pin_project! {
    /// A request body, read for its `model` as the handler reads it. Data
    /// passes through unchanged.
    #[derive(Debug)]
    pub struct RequestBody<B> {
        #[pin]
        inner: B,
        scan: Option<ModelScan>,
    }
}

impl<B> RequestBody<B> {
    pub(crate) fn new(inner: B, scan: Option<ModelScan>) -> Self {
        RequestBody { inner, scan }
    }
}

impl<B: Body> Body for RequestBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let frame = ready!(this.inner.poll_frame(cx));
        if let (Some(Ok(frame)), Some(model)) = (&frame, this.scan.as_mut()) {
            if let Some(data) = frame.data_ref() {
                let ModelScan { config, slot, scan } = model;
                let mut sink = ModelSink {
                    config,
                    slot,
                    found: false,
                };
                each_piece(data, |piece| scan.feed(piece, &mut sink));
                // The top-level `model` is all the layer needs of a request.
                if sink.found || scan.is_stopped() {
                    *this.scan = None;
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

pin_project! {
    /// A response body, read as it is sent: the request is recorded when it
    /// ends, or as cancelled when it is dropped before its end (the client
    /// went away). Data passes through unchanged.
    #[derive(Debug)]
    pub struct MeteredBody<B> {
        #[pin]
        inner: B,
        recording: Option<Recording>,
    }

    impl<B> PinnedDrop for MeteredBody<B> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(recording) = this.recording.take() {
                recording.fail(CANCELLED);
            }
        }
    }
}

impl<B: Body> MeteredBody<B> {
    pub(crate) fn new(inner: B, mut recording: Option<Recording>) -> Self {
        // A server never polls a body that says it has ended (an empty
        // one): its response is complete now, not cancelled later.
        if inner.is_end_stream() {
            if let Some(recording) = recording.take() {
                recording.end();
            }
        }
        MeteredBody { inner, recording }
    }
}

impl<B: Body> Body for MeteredBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let frame = ready!(this.inner.as_mut().poll_frame(cx));
        if let Some(recording) = this.recording.as_mut() {
            match &frame {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        each_piece(data, |piece| recording.data(piece));
                    }
                }
                Some(Err(_)) => {
                    if let Some(recording) = this.recording.take() {
                        recording.fail(BODY_ERROR);
                    }
                }
                None => {}
            }
        }
        if frame.is_none() || this.inner.is_end_stream() {
            if let Some(recording) = this.recording.take() {
                recording.end();
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
