//! The fault suite: what slow, bursty, malformed or hostile clients do to
//! the scrape endpoint, and what a receiver that is down, killed, hanging,
//! rejecting or presenting an untrusted certificate does to OTLP export.
//! Every test measures and asserts figures, prints them
//! (`cargo test -p nemo-lens-telemetry --all-features --test faults --
//! --nocapture` shows them), binds loopback only and is bounded in time.
//!
//! A binary of its own, apart from the rest of this crate's tests: its
//! figures are about the code under test, so no other test may compete for
//! the cores while it runs (cargo runs test binaries one after another).

use nemo_lens_test_support as support;

mod capture;
mod otlp;
mod scrape;
#[cfg(feature = "otlp-tls")]
mod tls;

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// One fault at a time: the figures are about the code under test, not
/// about tests competing for two cores.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
