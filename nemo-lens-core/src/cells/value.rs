//! The numbers a cell holds, each kept as the 64 bits of one atomic word.

/// A number a cell can hold: `u64`, `i64` or `f64`.
pub trait CellValue: Copy + PartialOrd + Send + Sync + 'static + sealed::Sealed {
    /// Zero.
    const ZERO: Self;
    /// The largest value: where a minimum starts.
    const MAX: Self;
    /// The smallest value: where a maximum starts.
    const MIN: Self;
    /// Which of the three it is.
    const KIND: crate::ValueType;
    /// The value's bits.
    fn to_bits(self) -> u64;
    /// The value of `bits`.
    fn from_bits(bits: u64) -> Self;
    /// `self + other`; integers wrap rather than panic on the hot path.
    fn add(self, other: Self) -> Self;
    /// The value as an `f64`, for bucket bounds and extremes.
    fn to_f64(self) -> f64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f64 {}
}

/// Integers: two's complement bits, wrapping sums.
macro_rules! integer_cell_value {
    ($($t:ident => $kind:ident),*) => {$(
        impl CellValue for $t {
            const KIND: crate::ValueType = crate::ValueType::$kind;
            const ZERO: Self = 0;
            const MAX: Self = $t::MAX;
            const MIN: Self = $t::MIN;
            #[inline]
            fn to_bits(self) -> u64 {
                self as u64
            }
            #[inline]
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            #[inline]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

integer_cell_value!(u64 => U64, i64 => I64);

impl CellValue for f64 {
    const KIND: crate::ValueType = crate::ValueType::F64;
    const ZERO: Self = 0.0;
    const MAX: Self = f64::INFINITY;
    const MIN: Self = f64::NEG_INFINITY;
    #[inline]
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    #[inline]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    #[inline]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}
