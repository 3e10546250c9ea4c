//! Every integration test of the `nemo-lens` facade, one module per area,
//! in one binary (as cargo's own `tests/testsuite`): linking a binary per
//! file made the suite's time and disk go to the linker.
//!
//! Modules that need a feature are compiled with it (`cargo test
//! --all-features` runs them all). Tests of process-wide state take turns
//! (`support::exclusive`) or run in a child process of their own
//! (`support::own_process!`); support shared with the other crates' tests
//! is `nemo-lens-test-support`. The end-to-end suites against real servers
//! are `#[ignore]`d here and run by `scripts/e2e.sh`, which builds what
//! they need.

use nemo_lens_test_support as support;

// Tests that read a counting allocator's totals: only while one counts, so
// the other tests pay one relaxed load per allocation.
#[global_allocator]
static ALLOCATOR: support::alloc::Counting = support::alloc::Counting;

mod aiperf_e2e;
#[cfg(feature = "testing")]
mod attribute_value;
#[cfg(feature = "prometheus")]
mod axum_metrics;
mod descriptor_attributes;
mod docs;
#[cfg(feature = "testing")]
mod durations;
mod exemplars_e2e;
mod features;
#[cfg(feature = "testing")]
mod flatten;
mod genai;
mod global_meter;
#[cfg(feature = "testing")]
mod goodput;
mod goodput_e2e;
mod groups;
mod groups_warnings;
#[cfg(feature = "testing")]
mod guard;
mod gym_release;
mod gym_unreleased;
mod layering;
mod memory;
mod memory_profiler;
#[cfg(all(feature = "metrics-bridge", feature = "prometheus"))]
mod metrics_bridge;
#[cfg(all(feature = "metrics-bridge-023", feature = "prometheus"))]
mod metrics_bridge_023;
#[cfg(all(feature = "metrics-bridge", feature = "prometheus"))]
mod metrics_bridge_alloc;
#[cfg(all(feature = "metrics-bridge", feature = "prometheus"))]
mod metrics_bridge_e2e;
#[cfg(feature = "prometheus")]
mod native_histograms_e2e;
#[cfg(feature = "testing")]
mod observe;
#[cfg(feature = "openai")]
mod openai_apis;
#[cfg(all(feature = "openai", feature = "testing"))]
mod openai_exemplars;
#[cfg(feature = "openai")]
mod openai_layer;
mod parity;
#[cfg(all(feature = "testing", feature = "prometheus"))]
mod present_only;
#[cfg(feature = "prometheus")]
mod prometheus_e2e;
mod proxy_e2e;
mod readme;
mod recording;
#[cfg(all(feature = "prometheus", feature = "prometheus-crate-bridge"))]
mod registry_bridge_e2e;
mod sampler;
mod semconv;
#[cfg(all(
    feature = "testing",
    feature = "prometheus",
    feature = "metrics-bridge"
))]
mod series_end;
#[cfg(feature = "testing")]
mod serving;
#[cfg(feature = "testing")]
mod start_at_zero;
#[cfg(feature = "testing")]
mod testing;
mod top_e2e;
mod training_e2e;
mod ui_pass;
mod warnings;
#[cfg(feature = "prometheus-tls")]
mod web_config_e2e;
