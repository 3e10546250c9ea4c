//! What one collection of a [`Registry`](super::Registry) yields, and the
//! delta a delta-temporality reader sends from it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::{InstrumentationScope, KeyValue};

use super::gathered::{GatheredKind, GatheredScope, GatheredValue};
use crate::cells::ExponentialBuckets;
use crate::exemplar::Exemplar;
use crate::ValueType;

/// The owned instruments of one instrumentation scope.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedScope {
    /// The scope, as the SDK meter it belongs to has it.
    pub scope: InstrumentationScope,
    /// Its instruments that have series.
    pub metrics: Vec<OwnedMetric>,
}

/// One owned histogram instrument and its series.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedMetric {
    /// The instrument name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its unit.
    pub unit: String,
    /// The type of the values recorded.
    pub value_type: ValueType,
    /// One point per series that has observations, in the order the series
    /// were made.
    pub data: OwnedData,
}

impl OwnedMetric {
    /// Each point's attributes, count and sum.
    pub fn totals(&self) -> Vec<(&[KeyValue], u64, f64)> {
        match &self.data {
            OwnedData::Explicit(points) => points
                .iter()
                .map(|p| (p.attributes.as_slice(), p.count, p.sum))
                .collect(),
            OwnedData::Exponential(points) => points
                .iter()
                .map(|p| (p.attributes.as_slice(), p.count, p.sum))
                .collect(),
        }
    }

    /// Each point's attributes and exemplars.
    pub fn exemplars(&self) -> Vec<(&[KeyValue], &[Exemplar])> {
        match &self.data {
            OwnedData::Explicit(points) => points
                .iter()
                .map(|p| (p.attributes.as_slice(), p.exemplars.as_slice()))
                .collect(),
            OwnedData::Exponential(points) => points
                .iter()
                .map(|p| (p.attributes.as_slice(), p.exemplars.as_slice()))
                .collect(),
        }
    }

    /// Each point's exemplars, to trim.
    pub(crate) fn exemplars_mut(&mut self) -> Vec<&mut Vec<Exemplar>> {
        match &mut self.data {
            OwnedData::Explicit(points) => points.iter_mut().map(|p| &mut p.exemplars).collect(),
            OwnedData::Exponential(points) => points.iter_mut().map(|p| &mut p.exemplars).collect(),
        }
    }

    fn is_empty(&self) -> bool {
        match &self.data {
            OwnedData::Explicit(points) => points.is_empty(),
            OwnedData::Exponential(points) => points.is_empty(),
        }
    }
}

/// The points of one owned histogram.
#[derive(Debug, Clone, PartialEq)]
pub enum OwnedData {
    /// Explicit buckets.
    Explicit(Vec<HistogramPoint>),
    /// Base-2 exponential buckets.
    Exponential(Vec<ExponentialPoint>),
}

/// One series of a base-2 exponential histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct ExponentialPoint {
    /// Its attributes, sorted by key.
    pub attributes: Vec<KeyValue>,
    /// When the series started: a series that ended and came back starts
    /// again.
    pub start_time: SystemTime,
    /// Observations in all.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// The smallest.
    pub min: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
    /// Buckets are `2^(2^-scale)` wide.
    pub scale: i8,
    /// Observations equal to zero.
    pub zero_count: u64,
    /// Positive observations.
    pub positive: ExponentialBuckets,
    /// Negative observations, by magnitude.
    pub negative: ExponentialBuckets,
    /// The latest exemplars, oldest first.
    pub exemplars: Vec<Exemplar>,
}

/// One series of an explicit-bucket histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramPoint {
    /// Its attributes, sorted by key.
    pub attributes: Vec<KeyValue>,
    /// When the series started: a series that ended and came back starts
    /// again.
    pub start_time: SystemTime,
    /// The bucket bounds.
    pub bounds: Arc<[f64]>,
    /// Observations per bucket, one more than the bounds.
    pub bucket_counts: Vec<u64>,
    /// The sum of `bucket_counts`.
    pub count: u64,
    /// The sum of the observations.
    pub sum: f64,
    /// The smallest observation.
    pub min: Option<f64>,
    /// The largest observation.
    pub max: Option<f64>,
    /// The latest exemplar of each bucket that has one, oldest first.
    pub exemplars: Vec<Exemplar>,
}

type SeriesKey = (String, Option<String>, String, Vec<KeyValue>);

/// What a delta reader last sent of one series, and the extremes of the
/// readings it left out since.
#[derive(Debug)]
struct Sent {
    /// The start of the series sent: one that ended and came back is new.
    start: SystemTime,
    count: u64,
    buckets: Vec<u64>,
    sum: f64,
    min: Option<f64>,
    max: Option<f64>,
}

/// Turns cumulative readings into deltas for a delta-temporality reader:
/// what each series gained since the last point sent, series that gained
/// nothing left out, as the SDK's delta aggregation does.
///
/// A reading can see half a record (the cells add the sum before the
/// bucket, so a reading between the two has the new sum and the old
/// count). Such a reading gained no count and is left out, and the
/// baseline stays at the last point sent: the next point carries the whole
/// record, so the deltas of a run add up to what was recorded, count and
/// sum. The extremes of a reading left out go out with the next point.
#[derive(Debug)]
pub struct Delta {
    last: HashMap<SeriesKey, Sent>,
    last_time: SystemTime,
    /// What each gathered counter and histogram series read last, and when.
    gathered: HashMap<GatheredKey, (GatheredValue, SystemTime)>,
}

/// A gathered series: its source's scope, family and labels.
type GatheredKey = (String, Option<String>, String, Vec<(String, String)>);

impl Delta {
    /// A reader whose first interval starts at `start`.
    pub fn new(start: SystemTime) -> Self {
        Delta {
            last: HashMap::new(),
            last_time: start,
            gathered: HashMap::new(),
        }
    }

    /// The counters and histograms of families gathered from other
    /// libraries as what each series gained since the last reading, each
    /// with that reading's time as its start; gauges, untyped families and
    /// summaries as they are. A value lower than the last one (the library's
    /// process-local reset) starts over: the point is the new value, from
    /// the last reading, never a negative delta. So the deltas of a run add
    /// up to the library's totals.
    pub fn apply_gathered(
        &mut self,
        mut scopes: Vec<GatheredScope>,
        now: SystemTime,
    ) -> Vec<GatheredScope> {
        let mut read = std::collections::HashSet::new();
        for scope in &mut scopes {
            for family in &mut scope.families {
                if !matches!(family.kind, GatheredKind::Counter | GatheredKind::Histogram) {
                    continue;
                }
                for series in &mut family.series {
                    let key = (
                        scope.scope.name().to_owned(),
                        scope.scope.version().map(str::to_owned),
                        family.name.clone(),
                        series.labels.clone(),
                    );
                    let reading = series.value.clone();
                    read.insert(key.clone());
                    if let Some((before, then)) = self.gathered.insert(key, (reading, now)) {
                        if let Some(delta) = series.value.since(&before) {
                            series.value = delta;
                        }
                        series.start = Some(then);
                    }
                }
            }
        }
        // A series the library no longer has starts over if it comes back.
        self.gathered.retain(|key, _| read.contains(key));
        scopes
    }

    /// The deltas of `scopes` (cumulative readings, extremes already reset
    /// per interval) and the start of their interval; the next interval
    /// starts at `now`.
    pub fn apply(
        &mut self,
        scopes: Vec<OwnedScope>,
        now: SystemTime,
    ) -> (Vec<OwnedScope>, SystemTime) {
        let start = std::mem::replace(&mut self.last_time, now);
        let mut read = std::collections::HashSet::new();
        let scopes = scopes
            .into_iter()
            .filter_map(|mut scope| {
                for metric in &mut scope.metrics {
                    // Exponential series were read and reset: already deltas.
                    let OwnedData::Explicit(points) = &mut metric.data else {
                        continue;
                    };
                    points.retain_mut(|point| {
                        let key = (
                            scope.scope.name().to_owned(),
                            scope.scope.version().map(str::to_owned),
                            metric.name.clone(),
                            point.attributes.clone(),
                        );
                        read.insert(key.clone());
                        self.delta(key, point)
                    });
                }
                scope.metrics.retain(|m| !m.is_empty());
                (!scope.metrics.is_empty()).then_some(scope)
            })
            .collect();
        // A series that ended is read no more; if its attributes come back,
        // they are a new series with nothing to subtract.
        self.last.retain(|key, _| read.contains(key));
        (scopes, start)
    }

    /// Turns `point` into its delta; `false` when it gained no count and
    /// is left out.
    fn delta(&mut self, key: SeriesKey, point: &mut HistogramPoint) -> bool {
        let sent = self
            .last
            .get_mut(&key)
            .filter(|sent| sent.start == point.start_time);
        let Some(sent) = sent else {
            self.last.insert(
                key,
                Sent {
                    start: point.start_time,
                    count: point.count,
                    buckets: point.bucket_counts.clone(),
                    sum: point.sum,
                    min: None,
                    max: None,
                },
            );
            return true;
        };
        if point.count <= sent.count {
            // Nothing whole since the last point: keep the baseline, and
            // the extremes this interval saw for the next point.
            sent.min = lowest(sent.min, point.min);
            sent.max = highest(sent.max, point.max);
            return false;
        }
        let (count, sum) = (point.count, point.sum);
        point.count -= sent.count;
        point.sum -= sent.sum;
        for (now, before) in point.bucket_counts.iter_mut().zip(&mut sent.buckets) {
            let reading = *now;
            *now = now.saturating_sub(*before);
            *before = reading;
        }
        point.min = lowest(point.min, sent.min.take());
        point.max = highest(point.max, sent.max.take());
        sent.count = count;
        sent.sum = sum;
        true
    }
}

fn lowest(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn highest(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}
