//! A private tokio runtime for the gRPC channel.
//!
//! The gRPC channel needs a tokio reactor. Rather than asking the user for
//! a runtime (or borrowing theirs, which a blocking `shutdown` on a
//! current-thread runtime would deadlock), the exporter gets a private
//! current-thread runtime on its own thread. The SDK's periodic reader
//! drives exports from its own thread, so `record` never waits on the
//! network.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::OtlpError;

/// How long the private runtime may take to wind down its tasks.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// A tokio runtime on a dedicated thread, kept for the exporter's lifetime.
pub struct OtlpRuntime {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl OtlpRuntime {
    pub(super) fn start() -> Result<(Self, tokio::runtime::Handle), OtlpError> {
        let (handle_tx, handle_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("nemo-lens-otlp".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = handle_tx.send(Err(e));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(runtime.handle().clone()));
                runtime.block_on(async {
                    let _ = stop_rx.await;
                });
                runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
            })
            .map_err(OtlpError::Runtime)?;
        let handle = handle_rx
            .recv()
            .map_err(|_| OtlpError::Runtime(std::io::Error::other("the runtime thread exited")))?
            .map_err(OtlpError::Runtime)?;
        Ok((
            OtlpRuntime {
                stop: Some(stop_tx),
                thread: Some(thread),
            },
            handle,
        ))
    }

    /// Stops the runtime, waiting at most `timeout` for its thread.
    pub fn stop(&mut self, timeout: Duration) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            join_bounded(thread, timeout);
        }
    }
}

impl Drop for OtlpRuntime {
    fn drop(&mut self) {
        self.stop(RUNTIME_SHUTDOWN * 2);
    }
}

/// Joins `thread` unless that takes longer than `timeout`, in which case the
/// thread is left to finish on its own.
fn join_bounded(thread: JoinHandle<()>, timeout: Duration) {
    if timeout.is_zero() {
        return;
    }
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let waiter = std::thread::spawn(move || {
        let _ = thread.join();
        let _ = done_tx.send(());
    });
    if done_rx.recv_timeout(timeout).is_ok() {
        let _ = waiter.join();
    }
}
