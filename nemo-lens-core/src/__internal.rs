//! What the other crates of the house (the exporters, setup, the bridges,
//! the built-in sets) use of the model that users do not: process-wide
//! state the exporters read, and the constructors setup calls. Not public
//! API: the `nemo-lens` facade never re-exports this module, and anything
//! here may change in any release (the house's crates pin each other
//! exactly).
//!
//! Free functions rather than hidden methods, so that the method lists of
//! [`Meter`] and [`Registry`] stay what users see.

use std::sync::Arc;

use opentelemetry::InstrumentationScope;

use crate::exemplar::ExemplarFilter;
use crate::owned::expiry::{Clock, Expiry, SeriesExpiry};
use crate::owned::Registry;
use crate::{Meter, SemconvOptIn};

pub use crate::error_debug::sentence_and_causes;
pub use crate::global::set_installed;
pub use crate::owned::feed::{keep_exports_coming, Feed};
pub use crate::owned::gathered::warn_shadowed;
pub use crate::owned::handle::OwnedContext;
#[cfg(any(feature = "prometheus", feature = "testing"))]
pub use crate::owned::text_blocks::blocks as text_blocks;
pub use crate::streams::{BucketOverride, Streams};

/// Series recorded through the `metrics` facade: what the metrics bridge
/// registers and the exporters read.
pub mod bridge {
    pub use crate::bridge::{
        otel_name, prometheus_name, register, state, BridgeState, SummaryFamily, SummarySeries,
        INSTANCE_ATTRIBUTE, SCOPE,
    };
    /// Series per bridged name before new ones are merged into its overflow
    /// series: `NEMO_LENS_CARDINALITY_LIMIT`, as the SDK applies it. The
    /// bridge merges counter and gauge series itself because the SDK's
    /// overflow series of an observable instrument keeps only the last
    /// observation (the sum of the merged counters would be lost).
    pub use crate::overflow::limit as cardinality_limit;
}

/// Instruments past their cardinality limit, spotted in what is exported.
pub mod overflow {
    pub use crate::overflow::{
        limit, note, note_owned, overflowing_instruments, set_limit, warn_once, OVERFLOW_ATTRIBUTE,
    };
}

/// The library's warnings, through `tracing` or once on stderr.
pub mod warnings {
    pub use crate::warnings::{emit, subscribed, Warning};
}

/// `CUDA_VISIBLE_DEVICES` as a count when the driver cannot be asked.
pub use crate::config::visible_gpus::named_count;

/// A meter whose owned series record into `owned`'s registry, read by the
/// exporters of `otel`'s provider (setup, and `testing::Capture`).
pub fn meter_with_owned(
    otel: opentelemetry::metrics::Meter,
    semconv: SemconvOptIn,
    owned: OwnedContext,
) -> Meter {
    Meter::with_owned(otel, semconv, owned)
}

/// A meter on `otel` (of `scope`, from `meter`'s provider) whose owned series
/// go to `meter`'s registry: the metrics bridge's.
pub fn meter_with_scope(
    meter: &Meter,
    otel: opentelemetry::metrics::Meter,
    scope: InstrumentationScope,
) -> Meter {
    meter.with_scope(otel, scope)
}

/// A registry whose series end as `expiry` says, timed by `clock` (the
/// monotonic clock when `None`), keeping the exemplars `exemplar_filter`
/// keeps.
pub fn registry_with(
    expiry: SeriesExpiry,
    clock: Option<Arc<dyn Clock>>,
    exemplar_filter: ExemplarFilter,
) -> Arc<Registry> {
    Registry::with_settings(Expiry::new(expiry, clock), exemplar_filter)
}
