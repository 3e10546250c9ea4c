//! Re-initialising telemetry in a loop does not grow memory: every cycle of
//! provider, meter, record and drop gives back what it took. Measured with a
//! counting allocator, so the check is exact rather than RSS-noisy, in a
//! process of its own (every thread's allocations count).

use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::{Instruments, Meter};

use crate::support::{alloc, own_process};

fn cycle(i: u64) {
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    let meter = Meter::from(provider.meter("nemo.lens"));
    RlMetrics::default()
        .reward_mean(i as f64)
        .rollout_duration_ms(5.0)
        .record(&meter);
    GymMetrics::default().active_servers(i).record(&meter);
    InferenceMetrics::default()
        .model(format!("model-{}", i % 7))
        .input_tokens(i)
        .record(&meter);
    assert_eq!(meter.cached_sets(), 3);
    drop(meter);
    provider.shutdown().unwrap();
}

#[test]
fn set_up_record_drop_cycles_do_not_grow_memory() {
    own_process!(set_up_record_drop_cycles_do_not_grow_memory);
    alloc::counting(true);
    // Warm up one-time allocations (thread-locals, lazy statics).
    for i in 0..50 {
        cycle(i);
    }
    let before = alloc::live_bytes();
    for i in 0..2_000 {
        cycle(i);
    }
    let growth = alloc::live_bytes() - before;
    assert!(growth < 16 * 1024, "2,000 cycles kept {growth} bytes alive");
}
