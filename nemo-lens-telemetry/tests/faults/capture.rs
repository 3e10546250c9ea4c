//! A process-wide `tracing` subscriber that keeps every line with the time
//! it was written, so tests can assert what was logged and how soon.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Every `tracing` line the library writes, with when it was written.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<(Instant, String)>>>);

impl Captured {
    /// The process-wide capture (a global subscriber: exports log from the
    /// SDK's reader thread, not from the test's).
    pub fn get() -> &'static Captured {
        static CAPTURED: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
        CAPTURED.get_or_init(|| {
            let captured = Captured::default();
            let writer = captured.clone();
            tracing_subscriber::fmt()
                .with_max_level(tracing::Level::INFO)
                .with_ansi(false)
                .with_writer(move || Line(writer.clone(), Vec::new()))
                .init();
            captured
        })
    }

    /// Lines mentioning `needle` (an endpoint, so tests do not see each
    /// other's lines) and `text`, with their times.
    pub fn lines(&self, needle: &str, text: &str) -> Vec<(Instant, String)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, l)| l.contains(needle) && l.contains(text))
            .cloned()
            .collect()
    }

    /// Waits (at most `timeout`) for the first line with `needle` and `text`.
    pub fn wait_for(
        &self,
        needle: &str,
        text: &str,
        timeout: Duration,
    ) -> Option<(Instant, String)> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(first) = self.lines(needle, text).into_iter().next() {
                return Some(first);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

/// One formatted event, stored when the formatter drops its writer.
struct Line(Captured, Vec<u8>);

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let line = String::from_utf8_lossy(&self.1).trim_end().to_owned();
        if !line.is_empty() {
            eprintln!("  captured: {line}");
            (self.0).0.lock().unwrap().push((Instant::now(), line));
        }
    }
}
