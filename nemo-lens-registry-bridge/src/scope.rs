//! The instrumentation scope of each bridged registry.

use std::sync::atomic::{AtomicI64, Ordering};

use opentelemetry::{InstrumentationScope, KeyValue};

/// The scope name every bridged registry's families go out under over OTLP.
pub const SCOPE: &str = "nemo_lens.registry_bridge";

/// The scope attribute naming the library the registry belongs to
/// (`prometheus` or `prometheus-client`).
pub const LIBRARY_ATTRIBUTE: &str = "nemo_lens.registry_bridge.library";

/// The scope attribute numbering the registries of the process in the
/// order they were given to a bridge, so that two registries never share a
/// scope.
pub const REGISTRY_ATTRIBUTE: &str = "nemo_lens.registry_bridge.registry";

/// A scope of its own for the next registry of `library` (at `version`).
#[cfg_attr(
    not(any(feature = "prometheus", feature = "prometheus-client")),
    allow(dead_code)
)]
pub(crate) fn next(library: &'static str, version: &'static str) -> InstrumentationScope {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let registry = NEXT.fetch_add(1, Ordering::Relaxed);
    InstrumentationScope::builder(SCOPE)
        .with_version(version)
        .with_attributes([
            KeyValue::new(LIBRARY_ATTRIBUTE, library),
            KeyValue::new(REGISTRY_ATTRIBUTE, registry),
        ])
        .build()
}
