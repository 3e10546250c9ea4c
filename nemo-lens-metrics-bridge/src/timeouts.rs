//! How long a bridged series may go unrecorded: the bridge's own timeout
//! for its kind, else the registry's rules for the instrument and the
//! series' labels (`NEMO_LENS_SERIES_IDLE_TIMEOUT`, `SeriesExpiry`).

use std::time::Duration;

use nemo_lens_core::SeriesExpiry;
use opentelemetry::KeyValue;

/// The idle timeouts of one bridged instrument's series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timeouts {
    /// [`MetricsBridge::idle_timeout`](crate::MetricsBridge::idle_timeout)
    /// for this kind: every series alike.
    own: Option<Duration>,
    /// The instrument's name and the registry's rules, when the bridge
    /// sets no timeout of its own.
    rules: Option<(String, SeriesExpiry)>,
}

impl Timeouts {
    pub(crate) fn new(own: Option<Duration>, name: &str, rules: Option<&SeriesExpiry>) -> Self {
        Timeouts {
            own,
            rules: rules
                .filter(|r| own.is_none() && !r.is_never())
                .map(|r| (name.to_owned(), r.clone())),
        }
    }

    /// The timeout of the series with `attributes`; `None`: never.
    pub(crate) fn of(&self, attributes: &[KeyValue]) -> Option<Duration> {
        self.own.or_else(|| {
            self.rules
                .as_ref()
                .and_then(|(name, rules)| rules.timeout_of(name, attributes))
        })
    }
}
