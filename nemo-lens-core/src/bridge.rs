//! What the exporters know of series recorded through the `metrics` facade
//! (`nemo_lens::metrics_bridge`): they come under their own instrumentation
//! scope, [`SCOPE`], and the Prometheus exposition writes them under the
//! names `metrics-exporter-prometheus` would (no `_total`, no unit suffix,
//! `:` kept), while OTLP carries names the SDK accepts. Not public API.
//!
//! What the SDK cannot carry (HELP described after an instrument was built,
//! summaries) each bridge keeps itself, as a [`BridgeState`]. Its scope has
//! an [`INSTANCE_ATTRIBUTE`] naming it, so an endpoint shows the state of
//! the bridges whose instruments its own provider collected, and no other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, Weak};

use opentelemetry::{InstrumentationScope, KeyValue, Value};

/// The instrumentation scope of every bridged instrument. The Prometheus
/// exposition recognises bridged series by it.
pub const SCOPE: &str = "nemo_lens.metrics_bridge";

/// The most characters the SDK accepts in an instrument name.
const OTEL_NAME_MAX: usize = 255;

/// Marks an OpenTelemetry name whose Prometheus name does not start with a
/// letter (`_x`, `:x`), which the SDK refuses. `-` never occurs in a
/// Prometheus name, so the mark cannot be mistaken for part of one.
const NON_LETTER_START: &str = "m-";

/// The scope attribute naming the bridge whose instruments a scope holds
/// (an `i64` unique in the process).
pub const INSTANCE_ATTRIBUTE: &str = "nemo_lens.metrics_bridge.instance";

/// What one bridge tells the Prometheus exposition beside its instruments.
pub trait BridgeState: Send + Sync {
    /// Its summary families now.
    fn summaries(&self) -> Vec<SummaryFamily>;
    /// The HELP text described for its family `prometheus_name`.
    fn help(&self, prometheus_name: &str) -> Option<String>;
    /// How its histogram `otel_name` is aggregated, noted before the
    /// histogram is built (the provider's view asks when it is).
    fn histogram_aggregation(&self, otel_name: &str) -> Option<crate::HistogramAggregation>;
}

type Instances = RwLock<HashMap<i64, Weak<dyn BridgeState>>>;

fn instances() -> &'static Instances {
    static INSTANCES: OnceLock<Instances> = OnceLock::new();
    INSTANCES.get_or_init(RwLock::default)
}

/// Registers a bridge: the scope its instruments go under, [`SCOPE`] with
/// an [`INSTANCE_ATTRIBUTE`] by which the exposition finds `state` for as
/// long as it lives. Setup builds the bridge's meter on that scope.
pub fn register(state: Weak<dyn BridgeState>) -> InstrumentationScope {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let instance = NEXT.fetch_add(1, Ordering::Relaxed);
    {
        let mut instances = instances().write().unwrap_or_else(PoisonError::into_inner);
        instances.retain(|_, state| state.strong_count() > 0);
        instances.insert(instance, state);
    }
    InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_attributes([KeyValue::new(INSTANCE_ATTRIBUTE, instance)])
        .build()
}

/// The state of the bridge whose instruments `scope` holds, if it is a
/// bridge's scope and the bridge lives.
pub fn state(scope: &InstrumentationScope) -> Option<Arc<dyn BridgeState>> {
    if scope.name() != SCOPE {
        return None;
    }
    let instance = scope.attributes().find_map(|kv| match &kv.value {
        Value::I64(instance) if kv.key.as_str() == INSTANCE_ATTRIBUTE => Some(*instance),
        _ => None,
    })?;
    instances()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&instance)
        .and_then(Weak::upgrade)
}

/// The OpenTelemetry instrument name of a Prometheus name (one of
/// `[a-zA-Z_:][a-zA-Z0-9_:]*`): `:` becomes `.`, a name not starting with a
/// letter gets `m-` in front. `None` when the result is
/// longer than the SDK accepts or `prometheus` is not such a name.
pub fn otel_name(prometheus: &str) -> Option<String> {
    let valid = prometheus.chars().enumerate().all(|(i, c)| {
        c == '_' || c == ':' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
    });
    if prometheus.is_empty() || !valid {
        return None;
    }
    let mut name = String::with_capacity(prometheus.len() + NON_LETTER_START.len());
    if !prometheus.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.push_str(NON_LETTER_START);
    }
    name.extend(prometheus.chars().map(|c| if c == ':' { '.' } else { c }));
    (name.len() <= OTEL_NAME_MAX).then_some(name)
}

/// The Prometheus name of a bridged instrument: [`otel_name`] undone.
pub fn prometheus_name(otel: &str) -> String {
    otel.strip_prefix(NON_LETTER_START)
        .unwrap_or(otel)
        .replace('.', ":")
}

/// A bridged histogram rendered as a Prometheus summary (the SDK has no
/// summary type, so the bridge computes the quantiles itself).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryFamily {
    /// The Prometheus name.
    pub name: String,
    /// Every series of the name.
    pub series: Vec<SummarySeries>,
}

/// One summary series.
#[derive(Debug, Clone, PartialEq)]
pub struct SummarySeries {
    /// Label names and values, names sanitized, sorted by name.
    pub labels: Vec<(String, String)>,
    /// `(quantile, value)` over the rolling window.
    pub quantiles: Vec<(f64, f64)>,
    /// Sum of every value recorded.
    pub sum: f64,
    /// Count of every value recorded.
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_valid_otel_names_and_back() {
        for (prometheus, otel) in [
            ("smg_http_requests_total", "smg_http_requests_total"),
            ("job:requests:rate5m", "job.requests.rate5m"),
            ("_private", "m-_private"),
            (":colon", "m-.colon"),
        ] {
            assert_eq!(otel_name(prometheus).as_deref(), Some(otel), "{prometheus}");
            assert_eq!(prometheus_name(otel), prometheus);
        }
        assert_eq!(otel_name(""), None);
        assert_eq!(otel_name("9lives"), None);
        assert_eq!(otel_name("a.b"), None);
        assert_eq!(otel_name(&"a".repeat(256)), None);
        assert!(otel_name(&"a".repeat(255)).is_some());
    }

    struct Described;

    impl BridgeState for Described {
        fn summaries(&self) -> Vec<SummaryFamily> {
            Vec::new()
        }

        fn help(&self, name: &str) -> Option<String> {
            Some(format!("{name} help"))
        }

        fn histogram_aggregation(&self, _: &str) -> Option<crate::HistogramAggregation> {
            None
        }
    }

    #[test]
    fn a_scope_names_its_bridge_while_it_lives() {
        let live: Arc<dyn BridgeState> = Arc::new(Described);
        let scope = |instance: i64| {
            InstrumentationScope::builder(SCOPE)
                .with_attributes([KeyValue::new(INSTANCE_ATTRIBUTE, instance)])
                .build()
        };
        instances()
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(-1, Arc::downgrade(&live));
        let found = state(&scope(-1)).map(|s| s.help("x"));
        assert_eq!(found, Some(Some("x help".to_owned())));
        assert!(state(&scope(-2)).is_none());
        let other = InstrumentationScope::builder("other")
            .with_attributes([KeyValue::new(INSTANCE_ATTRIBUTE, -1)])
            .build();
        assert!(state(&other).is_none());
        drop(live);
        assert!(state(&scope(-1)).is_none());
    }
}
