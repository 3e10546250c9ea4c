//! A custom set declared in a crate that depends only on `nemo-lens`.

use nemo_lens::{Instruments, Meter};

/// Megatron-style training metrics.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(prefix = "megatron")]
pub struct MegatronMetrics {
    /// Iterations skipped because of non-finite gradients.
    #[counter(unit = "{iteration}")]
    pub skipped_iters: Option<u64>,
    /// Language-model loss.
    #[gauge]
    pub lm_loss: Option<f64>,
    /// Time of one training iteration.
    #[histogram("megatron.iteration.duration", unit = "s", buckets = [0.25, 0.5, 1, 2, 4, 8])]
    pub iteration_time_s: Option<f64>,
    /// Micro-batches in flight in the pipeline.
    #[up_down_counter(unit = "{batch}")]
    pub in_flight: Option<i64>,
    /// Parallel configuration, as "tp2-pp4".
    #[attribute("megatron.parallelism", default = "tp1-pp1")]
    pub parallelism: Option<String>,
}

// A private set works too.
#[derive(Instruments, Default)]
struct Private {
    /// Queue depth.
    #[gauge("app.queue.depth")]
    depth: Option<u32>,
}

#[test]
fn megatron_custom_set() {
    let meter = Meter::noop();
    MegatronMetrics::default()
        .skipped_iters(1)
        .lm_loss(2.3)
        .record(&meter);
    Private::default().depth(3).record(&meter);
    let set: Option<&MegatronMetricsSet> = meter.instruments::<MegatronMetrics>();
    assert!(set.is_none());
    assert_eq!(MegatronMetrics::DESCRIPTORS.len(), 4);
}
