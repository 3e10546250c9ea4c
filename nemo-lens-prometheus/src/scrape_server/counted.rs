//! The connection's stream as hyper sees it, counting bytes each way.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::connection::Stream;

/// The connection's stream, counting the bytes that went each way.
pub(super) struct Counted<'a, S> {
    pub(super) stream: &'a mut S,
    pub(super) read: usize,
    pub(super) written: usize,
}

impl<'a, S> Counted<'a, S> {
    pub(super) fn new(stream: &'a mut S) -> Self {
        Counted {
            stream,
            read: 0,
            written: 0,
        }
    }
}

impl<S: Stream> tokio::io::AsyncRead for Counted<'_, S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut *self.stream).poll_read(cx, buf);
        self.read += buf.filled().len() - before;
        polled
    }
}

impl<S: Stream> tokio::io::AsyncWrite for Counted<'_, S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut *self.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.written += n;
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_flush(cx)
    }

    /// Only flushes: the close happens in `linger_close`, after any status
    /// hyper left unsent.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_flush(cx)
    }
}
