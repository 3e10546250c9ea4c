//! A thread that samples on an interval until its handle stops it: what
//! the memory profiler and the process sampler share.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// Samples every interval on a thread of its own; stopped when dropped.
#[derive(Debug)]
pub(crate) struct SamplingThread {
    running: Option<(Sender<()>, JoinHandle<()>)>,
}

impl SamplingThread {
    /// A handle with no thread, for a meter that records nothing.
    pub fn idle() -> Self {
        SamplingThread { running: None }
    }

    /// Makes the sampler's state with `init` on a thread named `name`, then
    /// calls `sample` on it every `interval`, and once more when stopped if
    /// `last_at_stop`. A thread that cannot start is a warning (naming
    /// `what`) and an idle handle, never a panic.
    pub fn spawn<S>(
        name: &str,
        what: &str,
        interval: Duration,
        last_at_stop: bool,
        init: impl FnOnce() -> S + Send + 'static,
        mut sample: impl FnMut(&mut S) + Send + 'static,
    ) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let mut state = init();
                // Sleeps until the interval passes or the handle goes away:
                // no wake-up in between.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    sample(&mut state);
                }
                if last_at_stop {
                    sample(&mut state);
                }
            });
        match thread {
            Ok(thread) => SamplingThread {
                running: Some((stop, thread)),
            },
            Err(error) => {
                nemo_lens_core::__internal::warnings::emit(
                    nemo_lens_core::__internal::warnings::Warning::Sampler,
                    || {
                        tracing::warn!(target: "nemo_lens", %error, "cannot start the {what} thread");
                    },
                );
                Self::idle()
            }
        }
    }

    /// Whether a sampling thread is running.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Stops the thread and waits for it to finish (its last sample too).
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            // Closing the channel wakes the thread, which then exits.
            drop(stop);
            let _ = thread.join();
        }
    }
}

impl Drop for SamplingThread {
    fn drop(&mut self) {
        self.stop();
    }
}
