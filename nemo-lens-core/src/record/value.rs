//! The checks every measurement passes before it reaches the SDK.

use std::fmt;

/// Why a measurement was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// NaN or an infinity.
    NonFinite,
    /// A negative value on a monotonic counter.
    NegativeOnCounter,
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reject::NonFinite => "value is not finite",
            Reject::NegativeOnCounter => "counters only add non-negative values",
        })
    }
}

/// Widening conversion from a field's type to the instrument's number type,
/// with the checks that type needs.
pub trait Measure: Copy {
    /// The instrument's number type.
    type Repr: Copy + fmt::Debug;
    /// The value to record, or why it must be dropped.
    fn measure(self, monotonic: bool) -> Result<Self::Repr, Reject>;
}

impl Measure for f64 {
    type Repr = f64;
    #[inline]
    fn measure(self, monotonic: bool) -> Result<f64, Reject> {
        if !self.is_finite() {
            Err(Reject::NonFinite)
        } else if monotonic && self < 0.0 {
            Err(Reject::NegativeOnCounter)
        } else {
            Ok(self)
        }
    }
}

impl Measure for f32 {
    type Repr = f64;
    #[inline]
    fn measure(self, monotonic: bool) -> Result<f64, Reject> {
        f64::from(self).measure(monotonic)
    }
}

macro_rules! widen {
    ($repr:ty: $($ty:ty),*) => {$(
        impl Measure for $ty {
            type Repr = $repr;
            #[inline]
            fn measure(self, _monotonic: bool) -> Result<$repr, Reject> {
                Ok(<$repr>::from(self))
            }
        }
    )*};
}

widen!(u64: u64, u32, u16, u8);
widen!(i64: i64, i32, i16, i8);

impl Measure for usize {
    type Repr = u64;
    #[inline]
    fn measure(self, _monotonic: bool) -> Result<u64, Reject> {
        // usize is at most 64 bits on every target Rust supports.
        Ok(self as u64)
    }
}

/// `duration` in a unit of `nanos_per_unit` nanoseconds (1_000_000 for
/// `ms`). Whole seconds and the nanoseconds past them are converted apart,
/// so a value such as 1.5 ms comes out exactly 1.5 and long durations keep
/// their sub-second part.
#[inline]
pub fn duration_in(duration: std::time::Duration, nanos_per_unit: u64) -> f64 {
    let unit = nanos_per_unit as f64;
    duration.as_secs() as f64 * (1e9 / unit) + f64::from(duration.subsec_nanos()) / unit
}

/// Checks `value` for an instrument; `monotonic` for counters.
#[inline]
pub fn checked<T: Measure>(value: T, monotonic: bool) -> Result<T::Repr, Reject> {
    value.measure(monotonic)
}

#[cfg(test)]
mod duration_tests {
    use std::time::Duration;

    use super::duration_in;

    #[test]
    fn durations_come_out_in_the_unit() {
        let d = Duration::from_micros(1500);
        assert_eq!(duration_in(d, 1_000_000), 1.5, "ms");
        assert_eq!(duration_in(d, 1_000_000_000), 0.0015, "s");
        assert_eq!(duration_in(d, 1_000), 1500.0, "us");
        assert_eq!(duration_in(d, 1), 1_500_000.0, "ns");
        assert_eq!(
            duration_in(Duration::from_secs(90), 60_000_000_000),
            1.5,
            "min"
        );
        assert_eq!(
            duration_in(Duration::from_secs(5400), 3_600_000_000_000),
            1.5,
            "h"
        );
        // Long durations keep their sub-second part.
        assert_eq!(
            duration_in(Duration::new(86_400, 250_000_000), 1_000_000),
            86_400_250.0
        );
        assert_eq!(duration_in(Duration::ZERO, 1_000_000), 0.0);
    }
}
