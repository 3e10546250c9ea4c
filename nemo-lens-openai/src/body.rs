//! The request and response bodies the layer reads as they pass.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Buf;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::json::{Field, Found, JsonScan, Sink};
use crate::recording::{FromRequest, Recording, BODY_ERROR};

/// Calls `read` with each contiguous piece of `data`; `false` when the
/// pieces did not hold all of it (a buffer of more than a few pieces, which
/// no HTTP body of bytes is), so that the reader can stop rather than read
/// a frame with a hole in it.
fn each_piece(data: &impl Buf, mut read: impl FnMut(&[u8])) -> bool {
    // Most frames are one piece (`Bytes`): read in place.
    let first = data.chunk();
    if first.len() == data.remaining() {
        read(first);
        return true;
    }
    let mut pieces = [std::io::IoSlice::new(&[]); 8];
    let filled = data.chunks_vectored(&mut pieces);
    let whole = pieces[..filled].iter().map(|p| p.len()).sum::<usize>() == data.remaining();
    if whole {
        for piece in &pieces[..filled] {
            read(piece);
        }
    }
    whole
}

/// The request body's `model`, found as the handler reads the body, and
/// the span the handler reads it in.
#[derive(Debug)]
pub(crate) struct ModelScan {
    from_request: Arc<FromRequest>,
    scan: JsonScan,
    /// Whether the request's span is still to note.
    span_pending: bool,
}

impl ModelScan {
    pub(crate) fn new(from_request: Arc<FromRequest>) -> Self {
        ModelScan {
            from_request,
            scan: JsonScan::default(),
            span_pending: true,
        }
    }
}

struct ModelSink<'a> {
    from_request: &'a FromRequest,
    found: bool,
}

impl Sink for ModelSink<'_> {
    fn found(&mut self, field: Field, value: Found<'_>) {
        if let (Field::Model, Found::Str { bytes, .. }) = (field, value) {
            self.from_request.store_model(bytes);
            self.found = true;
        }
    }

    fn is_done(&self) -> bool {
        self.found
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
        // The handler reads its body in the request's span, even when the
        // layer entering it runs inside this one: the span is noted here,
        // once.
        if let Some(model) = this.scan.as_mut()
            && model.span_pending
            && let Some(current) = nemo_lens_core::exemplar::current()
        {
            let _ = model.from_request.span.set(current);
            model.span_pending = false;
        }
        if let (Some(Ok(frame)), Some(model)) = (&frame, this.scan.as_mut())
            && let Some(data) = frame.data_ref()
        {
            let ModelScan {
                from_request, scan, ..
            } = model;
            let mut sink = ModelSink {
                from_request,
                found: false,
            };
            let whole = each_piece(data, |piece| scan.feed(piece, &mut sink));
            // The top-level `model` is all the layer needs of a request.
            if sink.found || scan.is_stopped() || !whole {
                *this.scan = None;
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
    /// ends (its last frame, or its declared length, went out), or as
    /// cancelled when it is dropped before its end (the client went away).
    /// Data passes through unchanged.
    #[derive(Debug)]
    pub struct MeteredBody<B> {
        #[pin]
        inner: B,
        recording: Option<Box<Recording>>,
        // Bytes still to send when the length was declared: a server stops
        // polling, and drops the body, once it has sent that many.
        remaining: Option<u64>,
    }
}

impl<B: Body> MeteredBody<B> {
    /// `declared` is the response's `Content-Length`, if it has one.
    pub(crate) fn new(
        inner: B,
        mut recording: Option<Box<Recording>>,
        declared: Option<u64>,
    ) -> Self {
        let remaining = declared.or(inner.size_hint().exact());
        // A server never polls a body that says it has ended (an empty
        // one): its response is complete now, not cancelled later.
        if (inner.is_end_stream() || remaining == Some(0))
            && let Some(recording) = recording.take()
        {
            recording.end();
        }
        MeteredBody {
            inner,
            recording,
            remaining,
        }
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
        let Some(recording) = this.recording.as_mut() else {
            return Poll::Ready(frame);
        };
        let ended = match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    if !each_piece(data, |piece| recording.data(piece)) {
                        recording.stop_reading();
                    }
                    if let Some(remaining) = this.remaining.as_mut() {
                        *remaining = remaining.saturating_sub(data.remaining() as u64);
                    }
                }
                *this.remaining == Some(0) || this.inner.is_end_stream()
            }
            Some(Err(_)) => {
                if let Some(recording) = this.recording.take() {
                    recording.fail(BODY_ERROR);
                }
                false
            }
            None => true,
        };
        if ended && let Some(recording) = this.recording.take() {
            recording.end();
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

#[cfg(test)]
mod tests {
    use bytes::{Buf, Bytes};

    use super::each_piece;

    fn pieces(data: &impl Buf) -> (Vec<Vec<u8>>, bool) {
        let mut read = Vec::new();
        let whole = each_piece(data, |piece| read.push(piece.to_vec()));
        (read, whole)
    }

    #[test]
    fn a_frame_is_read_in_its_pieces_or_not_at_all() {
        let one = Bytes::from_static(b"data: {}\n\n");
        assert_eq!(pieces(&one), (vec![b"data: {}\n\n".to_vec()], true));
        let two = Bytes::from_static(b"data: ").chain(Bytes::from_static(b"{}\n\n"));
        assert_eq!(
            pieces(&two),
            (vec![b"data: ".to_vec(), b"{}\n\n".to_vec()], true)
        );
        // More pieces than are looked at: none is read, and the reader is
        // told to stop.
        let mut many: Box<dyn Buf> = Box::new(Bytes::from_static(b"0"));
        for piece in [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8"] {
            many = Box::new(many.chain(Bytes::from_static(piece)));
        }
        assert_eq!(pieces(&many), (Vec::new(), false));
    }
}
