//! The trait that `#[derive(Instruments)]` implements.

use crate::{Descriptor, Meter, SetSlot};

/// A struct of optional measurements that knows how to record itself.
///
/// Derive it rather than implementing it by hand: the derive checks names,
/// units, kinds and buckets at compile time and generates the instrument set,
/// its cache slot and the recording code.
///
/// ```
/// use nemo_lens::{Instruments, Meter};
///
/// /// Metrics of one training step.
/// #[derive(Instruments, Default)]
/// #[instruments(prefix = "train")]
/// struct StepMetrics {
///     /// Training loss of the step.
///     #[gauge]
///     loss: Option<f64>,
///     /// Iterations skipped because of non-finite gradients.
///     #[counter(unit = "{iteration}")]
///     skipped_iters: Option<u64>,
/// }
///
/// let meter = Meter::noop();
/// StepMetrics::default().loss(0.25).skipped_iters(1).record(&meter);
/// ```
pub trait Instruments: 'static {
    /// The instruments this struct records into, built once per meter.
    type Set: Send + Sync + 'static;

    /// One entry per recorded field, in declaration order.
    const DESCRIPTORS: &'static [Descriptor];

    /// Builds the instruments of the set on `meter`'s OpenTelemetry meter:
    /// those whose [`SemconvGate`](crate::SemconvGate) is open for the
    /// meter's [opt-in](Meter::semconv_opt_in).
    fn build_set(meter: &Meter) -> Self::Set;

    /// The process-wide cache slot of [`Self::Set`](Instruments::Set).
    fn slot() -> &'static SetSlot;

    /// Records every field that is `Some` into a set the caller holds.
    fn record_with(&self, set: &Self::Set);

    /// Records every field that is `Some` on `meter`, building the set on the
    /// meter's first use and reusing it afterwards.
    #[inline]
    fn record(&self, meter: &Meter) {
        if let Some(set) = meter.instruments::<Self>() {
            self.record_with(set);
        }
    }
}

/// A set with a guard: prepared with its setters, then started.
///
/// `T::start(&meter)` starts a guard on an empty set; `start` on a value
/// (this trait, in scope with `use nemo_lens::Guarded`) starts one on the
/// set as prepared, so the attributes of its `in_flight` counters can be set
/// before the count goes up. Implemented by `#[instruments(guard)]` sets and
/// by the built-in sets that have a request guard.
///
/// ```
/// use nemo_lens::{Guarded, Instruments, Meter};
///
/// /// Jobs of a worker.
/// #[derive(Instruments, Default)]
/// #[instruments(guard)]
/// struct Job {
///     /// Jobs running.
///     #[up_down_counter("app.jobs.active", unit = "{job}", in_flight)]
///     active: Option<i64>,
///     /// The job's queue.
///     #[attribute("app.queue")]
///     queue: Option<String>,
/// }
///
/// let meter = Meter::noop();
/// let job = Job::default().queue("gpu").start(&meter);
/// job.finish();
/// ```
pub trait Guarded: Instruments + Sized {
    /// What [`start`](Guarded::start) returns.
    type Guard;

    /// Starts the guard on this set as prepared.
    fn start(self, meter: &Meter) -> Self::Guard;
}
