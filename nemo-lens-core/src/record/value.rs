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

/// Checks `value` for an instrument; `monotonic` for counters.
#[inline]
pub fn checked<T: Measure>(value: T, monotonic: bool) -> Result<T::Repr, Reject> {
    value.measure(monotonic)
}
