//! The `Recorder` of one `metrics` version on [`BridgeRecorder`], written
//! once: 0.24's in `recorder` and 0.23's in `compat_023` differ only in the
//! crate they implement, the registries their keys are looked up in (each
//! version's keys have their own, since converting a key would allocate on
//! every macro call) and how a unit is read.
//!
//! [`BridgeRecorder`]: crate::BridgeRecorder

/// Implements `$metrics::Recorder` for `BridgeRecorder`, looking keys up in
/// the registries `$counters`, `$gauges` and `$histograms` of its `Inner`,
/// making series keys with `$series_key` and units 0.24's with `$unit`.
macro_rules! recorder_for {
    (
        $metrics:ident,
        registries: ($counters:ident, $gauges:ident, $histograms:ident),
        series_key: $series_key:path,
        unit: $unit:path $(,)?
    ) => {
        fn parts(key: &$metrics::Key) -> $crate::recorder::KeyParts<'_> {
            $crate::recorder::KeyParts {
                name: key.name(),
                labels: key.labels().map(|l| (l.key(), l.value())).collect(),
            }
        }

        impl $metrics::Recorder for $crate::recorder::BridgeRecorder {
            fn describe_counter(
                &self,
                key: $metrics::KeyName,
                unit: Option<$metrics::Unit>,
                description: $metrics::SharedString,
            ) {
                self.inner.describe(key.as_str(), $unit(unit), &description);
            }

            fn describe_gauge(
                &self,
                key: $metrics::KeyName,
                unit: Option<$metrics::Unit>,
                description: $metrics::SharedString,
            ) {
                self.inner.describe(key.as_str(), $unit(unit), &description);
            }

            fn describe_histogram(
                &self,
                key: $metrics::KeyName,
                unit: Option<$metrics::Unit>,
                description: $metrics::SharedString,
            ) {
                self.inner.describe(key.as_str(), $unit(unit), &description);
            }

            #[inline]
            fn register_counter(
                &self,
                key: &$metrics::Key,
                _metadata: &$metrics::Metadata<'_>,
            ) -> $metrics::Counter {
                let inner = &self.inner;
                inner
                    .scalar(&inner.$counters, key, parts, $series_key)
                    .map_or_else($metrics::Counter::noop, $metrics::Counter::from_arc)
            }

            #[inline]
            fn register_gauge(
                &self,
                key: &$metrics::Key,
                _metadata: &$metrics::Metadata<'_>,
            ) -> $metrics::Gauge {
                let inner = &self.inner;
                inner
                    .scalar(&inner.$gauges, key, parts, $series_key)
                    .map_or_else($metrics::Gauge::noop, $metrics::Gauge::from_arc)
            }

            #[inline]
            fn register_histogram(
                &self,
                key: &$metrics::Key,
                _metadata: &$metrics::Metadata<'_>,
            ) -> $metrics::Histogram {
                let inner = &self.inner;
                inner
                    .histogram(&inner.$histograms, key, parts, $series_key)
                    .map_or_else($metrics::Histogram::noop, $metrics::Histogram::from_arc)
            }
        }
    };
}
