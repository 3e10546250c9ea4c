//! The cells a series records into, owned by nemo-lens rather than the SDK,
//! so that one series recorded from every worker thread runs at per-thread
//! speed.
//!
//! A counter's cell starts as one word written with a compare-and-swap. A
//! thread whose compare-and-swap fails has collided with another, and from
//! then on the series records into stripes: cache-padded copies of the cell,
//! each created only when a thread lands on it, read and combined at
//! collection (Java's `LongAdder` does the same). A series no two threads
//! ever write at once keeps its one cell and pays nothing more.
//!
//! An explicit-bucket histogram's cells each have one writer, so a record
//! is plain loads and stores, without a locked instruction: the series'
//! first cell belongs to the first thread that records into it, and each
//! other thread records into a stripe it owns (claimed with one
//! compare-and-swap in the stripe's life). A thread that finds no stripe of
//! its own (more threads than stripes) records into the series' commons
//! under a lock. Threads are told apart by a small number each draws on its
//! first record and gives back when it exits; a thread that draws it later
//! takes over what the exited one owned.
//!
//! What one series costs, on `n` cores, with `s` = [`stripe_limit`] (the
//! smaller of [`MAX_STRIPES`] and `2n` rounded up to a power of two: 4 on
//! 2 cores, 32 on 16, 64 from 32 cores on) and `w` = the histogram's words
//! (one more bucket than bounds, plus its writer, sum, minimum and maximum):
//!
//! | cell | one thread | more threads add (at most `s` stripes) |
//! |---|---|---|
//! | [`Sum`] (counters, up-down counters) | 64 bytes, a cache line of its own | on contention, 128 bytes a stripe, plus a table of `12·s + 8` bytes once (pointers, owners, the commons) |
//! | [`LastValue`] (gauges) | 64 bytes | never striped: a write that changes nothing is skipped, and the last write wins |
//! | [`Histogram`] (explicit buckets) | 56 bytes and `128·⌈w/16⌉` (256 for the GenAI duration buckets) | `128 + 128·⌈w/16⌉` bytes for each other thread that records (its stripe; the commons past `s`), plus the table |
//! | [`ExponentialHistogram`] | 256 bytes and 8 per bucket in use (at most 160 a side) | on contention, 128 bytes and 8 per bucket in use a stripe, plus the table |
//!
//! Where the exemplar filter is not `always_off`, a histogram series also
//! holds one 64-byte exemplar slot per bucket (explicit) or up to 20
//! (exponential), written only by the records the filter keeps.
//!
//! Nothing recorded is lost: cells are never reset, so a collection reads a
//! running total that only the next collection can supersede, and a thread
//! that exits leaves its stripes with the series.

#[cfg(not(nemo_lens_no_exemplars))]
mod exemplars;
mod exponential;
mod histogram;
mod last_value;
pub(crate) mod owner;
mod probe;
mod stripes;
mod sum;
mod sync;
mod value;

#[cfg(all(test, nemo_lens_loom))]
mod loom_tests;
#[cfg(all(test, not(nemo_lens_loom), not(nemo_lens_no_exemplars)))]
mod span_tests;
#[cfg(all(test, not(nemo_lens_loom)))]
mod tests;

pub use exponential::{ExponentialBuckets, ExponentialHistogram, ExponentialSnapshot};
pub use histogram::{Histogram, HistogramSnapshot};
pub use last_value::LastValue;
pub use stripes::{stripe_limit, MAX_STRIPES};
pub use sum::Sum;
pub use value::CellValue;

pub(crate) use stripes::Padded;
