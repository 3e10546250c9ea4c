//! What both request guards share: hold a set's fields and the timing, and
//! record exactly once, on finish, on failure, or on drop.
//!
//! They are not `#[instruments(guard)]` guards, for three reasons: they
//! measure inside the lifecycle (time to first token, time per output
//! token, the gap before each chunk) where a generated guard measures only
//! start to end; their sets keep Python's `f64` seconds fields
//! (`request_duration_s`), where `elapsed` takes a `Duration`; and a failure
//! changes what is recorded (no output tokens or timings), not only
//! `error.type`. `ScheduledRequest` moves between two gauges, where a
//! generated guard holds one `in_flight` count.

use std::time::Instant;

use nemo_lens_core::exemplar::Captured;
use nemo_lens_core::{Instruments, Meter, MeterLease};
use opentelemetry::StringValue;

use crate::timing::{Measured, Timing};

/// The `error.type` of a request or call dropped without being finished or
/// failed: the conventions' fallback value.
pub const DROPPED_ERROR_TYPE: &str = "_OTHER";

/// A set that a guard fills from what it measured, then records.
pub(crate) trait Ended: Instruments + Default + Send {
    /// Fills the measured fields (the duration always, the first-output and
    /// per-output times only when `error_type` is `None`) and records them
    /// on `meter`.
    fn ended(&mut self, meter: &Meter, measured: Measured, error_type: Option<StringValue>);

    /// Moves what a prepared set says about the measured fields into the
    /// guard's `timing`, which owns them from the start.
    fn prepare(&mut self, _timing: &mut Timing) {}
}

/// The generic guard behind [`InferenceRequest`](crate::InferenceRequest) and
/// [`ModelCall`](crate::ModelCall).
#[derive(Debug)]
pub(crate) struct Guard<S: Ended> {
    meter: MeterLease,
    pub metrics: S,
    pub timing: Timing,
    /// The span current at the start, which links what the guard records
    /// at its end (a TTFT or duration recorded in a body's last poll,
    /// outside the request's span) to that request.
    span: Captured,
    ended: bool,
}

impl<S: Ended> Guard<S> {
    /// Starts on `metrics` as prepared (the attributes and counts set so far).
    pub fn start(meter: &Meter, at: Option<Instant>, mut metrics: S) -> Self {
        let mut timing = match at {
            Some(at) => Timing::start_at(meter.is_enabled(), at),
            None => Timing::default(),
        };
        metrics.prepare(&mut timing);
        let span = if timing.is_timing() {
            Captured::now()
        } else {
            Captured::none()
        };
        Guard {
            meter: meter.lease(),
            metrics,
            timing,
            span,
            ended: false,
        }
    }

    /// Links the records to `span` when no sampled span was current at the
    /// start (a layer outside the one that enters the request's span).
    pub fn link_span(&mut self, span: nemo_lens_core::exemplar::SpanIds) {
        if self.timing.is_timing() && self.span.span().is_none() {
            self.span = Captured::of(span);
        }
    }

    /// `Instant::now()` when timing, so a disabled meter reads no clock.
    #[inline]
    pub fn now(&self) -> Option<Instant> {
        self.timing.is_timing().then(Instant::now)
    }

    /// Notes the first output now, reading the clock only the first time.
    #[inline]
    pub fn first(&mut self) {
        if self.timing.is_timing() && !self.timing.has_first() {
            self.timing.first_at(Instant::now());
        }
    }

    pub fn end(mut self, at: Option<Instant>, error_type: Option<StringValue>) {
        self.ended = true;
        // An empty error type would be exported as no error.type at all, and
        // the failure counted as a success.
        let error_type = error_type.map(|error| match error.as_str() {
            "" => StringValue::from(DROPPED_ERROR_TYPE),
            _ => error,
        });
        if let Some(at) = at {
            self.record(at, error_type);
        }
    }

    fn record(&mut self, end: Instant, error_type: Option<StringValue>) {
        let Some(measured) = self.timing.end_at(end) else {
            return;
        };
        // Recorded in place: the guard is ending, nothing reads the fields
        // after this.
        let (metrics, meter) = (&mut self.metrics, &self.meter);
        self.span
            .scope(|| metrics.ended(meter, measured, error_type));
    }
}

impl<S: Ended> Drop for Guard<S> {
    fn drop(&mut self) {
        if !self.ended && self.timing.is_timing() {
            self.ended = true;
            self.record(Instant::now(), Some(StringValue::from(DROPPED_ERROR_TYPE)));
        }
    }
}

/// The attribute and token setters of a guard, each storing its value in the
/// guard's set: both guards state their setters in one table each. Each
/// field gets `name(value) -> Self` to chain and `set_name(value) -> &mut
/// Self` through a borrow, as the derive's guards have. `into T` takes
/// anything that converts into `T`; a plain `T` takes `T` itself, so that a
/// literal port (`8000`) needs no suffix.
macro_rules! guard_setters {
    () => {};
    // A field of the flattened group `$group`.
    ($(#[$doc:meta])* $name:ident $set:ident in $group:ident: into $ty:ty; $($rest:tt)*) => {
        $crate::guard::guard_setters!(@pair $(#[$doc])* $name $set [$group.$name] (value: impl Into<$ty>) value.into());
        guard_setters!($($rest)*);
    };
    ($(#[$doc:meta])* $name:ident $set:ident in $group:ident: $ty:ty; $($rest:tt)*) => {
        $crate::guard::guard_setters!(@pair $(#[$doc])* $name $set [$group.$name] (value: $ty) value);
        guard_setters!($($rest)*);
    };
    ($(#[$doc:meta])* $name:ident $set:ident: into $ty:ty; $($rest:tt)*) => {
        $crate::guard::guard_setters!(@pair $(#[$doc])* $name $set [$name] (value: impl Into<$ty>) value.into());
        guard_setters!($($rest)*);
    };
    ($(#[$doc:meta])* $name:ident $set:ident: $ty:ty; $($rest:tt)*) => {
        $crate::guard::guard_setters!(@pair $(#[$doc])* $name $set [$name] (value: $ty) value);
        guard_setters!($($rest)*);
    };
    (@pair $(#[$doc:meta])* $name:ident $set:ident [$($field:tt)*] ($($param:tt)*) $value:expr) => {
        $(#[$doc])*
        pub fn $name(mut self, $($param)*) -> Self {
            self.guard.metrics.$($field)* = Some($value);
            self
        }

        $(#[$doc])*
        ///
        /// The same through a borrow.
        pub fn $set(&mut self, $($param)*) -> &mut Self {
            self.guard.metrics.$($field)* = Some($value);
            self
        }
    };
}

pub(crate) use guard_setters;

/// How a guard starts and ends, the same for both guards (written once so
/// that what `finish`, `fail` and their `_at` twins record cannot drift
/// apart): `$noun` names what the guard measures in the docs, `$began` what
/// happened at its start ("arrived", "was sent").
macro_rules! lifecycle {
    ($guard:ident, $set:ident, $noun:literal, $began:literal) => {
        /// Starts the guard on the set as prepared with its setters (the
        /// guard owns the durations, the timings and `error.type`, which it
        /// sets when the work ends):
        #[doc = concat!("`", stringify!($set), "::default().model(\"m\").start(&meter)` is `",
            stringify!($guard), "::start(&meter).model(\"m\")`.")]
        impl nemo_lens_core::Guarded for $set {
            type Guard = $guard;

            fn start(self, meter: &Meter) -> $guard {
                let now = meter.is_enabled().then(Instant::now);
                $guard {
                    guard: Guard::start(meter, now, self),
                }
            }
        }

        impl $guard {
            #[doc = concat!("Starts measuring a ", $noun, " now.")]
            pub fn start(meter: &Meter) -> Self {
                nemo_lens_core::Guarded::start($set::default(), meter)
            }

            #[doc = concat!("Starts measuring a ", $noun, " that ", $began, " at `at`.")]
            pub fn start_at(meter: &Meter, at: Instant) -> Self {
                $guard {
                    guard: Guard::start(meter, Some(at), $set::default()),
                }
            }

            #[doc = concat!("Ends the ", $noun, " successfully now.")]
            pub fn finish(self) {
                let now = self.guard.now();
                self.guard.end(now, None);
            }

            #[doc = concat!("Ends the ", $noun, " successfully at `at`.")]
            pub fn finish_at(self, at: Instant) {
                self.guard.end(Some(at), None);
            }

            #[doc = concat!(
                        "Ends the ", $noun, " now as failed with `error_type` (`timeout`, ",
                        "`cancelled`, an exception or status name); an empty one is recorded ",
                        "as `_OTHER`."
                    )]
            pub fn fail(self, error_type: impl Into<StringValue>) {
                let now = self.guard.now();
                self.guard.end(now, Some(error_type.into()));
            }

            #[doc = concat!("Ends the ", $noun, " at `at` as failed with `error_type`.")]
            pub fn fail_at(self, error_type: impl Into<StringValue>, at: Instant) {
                self.guard.end(Some(at), Some(error_type.into()));
            }
        }
    };
}

pub(crate) use lifecycle;
