//! The cells a series records into, owned by nemo-lens rather than the SDK,
//! so that one series recorded from every worker thread runs at per-thread
//! speed.
//!
//! Each cell starts as one word (or one set of buckets) written with a
//! compare-and-swap. A thread whose compare-and-swap fails has collided with
//! another, and from then on the series records into stripes: cache-padded
//! copies of the cell, each created only when a thread lands on it, read and
//! combined at collection (Java's `LongAdder` does the same). A series no two
//! threads ever write at once keeps its one cell and pays nothing more.
//!
//! | cell | uncontended | fully striped (on `n` cores) |
//! |---|---|---|
//! | [`Sum`] (counters, up-down counters) | 16 bytes | 16 + 8·s + 128·s bytes |
//! | [`LastValue`] (gauges) | 8 bytes | never striped: a write that changes nothing is skipped, and the last write wins |
//! | [`Histogram`] (explicit buckets `b`) | 48 + 8·(b+4) bytes | that + 8·s + s·128·⌈(b+4)/16⌉ bytes |
//! | [`ExponentialHistogram`] (`k` buckets in use, at most 160 a side) | about 120 + 8·k bytes | that + 8·s + s·(128 + 8·k) bytes |
//!
//! where `s` = [`stripe_limit`] = the smaller of [`MAX_STRIPES`] and twice
//! the number of cores rounded up to a power of two.
//!
//! Nothing recorded is lost: cells are never reset, so a collection reads a
//! running total that only the next collection can supersede, and a thread
//! that exits leaves its stripes with the series.

mod exponential;
mod histogram;
mod last_value;
mod probe;
mod stripes;
mod sum;
mod sync;
mod value;

#[cfg(all(test, nemo_lens_loom))]
mod loom_tests;
#[cfg(all(test, not(nemo_lens_loom)))]
mod tests;

pub use exponential::{ExponentialBuckets, ExponentialHistogram, ExponentialSnapshot};
pub use histogram::{Histogram, HistogramSnapshot};
pub use last_value::LastValue;
pub use stripes::{stripe_limit, MAX_STRIPES};
pub use sum::Sum;
pub use value::CellValue;
