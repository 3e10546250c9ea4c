//! Histograms as what happened over an interval: the difference of two
//! readings of one series (classic or native buckets), merged across
//! replicas, and read as quantiles the way Prometheus's
//! `histogram_quantile` does (linear within a bucket, the `+Inf` bucket at
//! its lower bound).

use std::collections::BTreeMap;

use super::exposition::{Native, Value};

/// Observations between two readings: each bucket as `(lower, upper,
/// count)`, a `+Inf` upper bound for the last classic bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    /// The buckets that gained observations.
    pub buckets: Vec<(f64, f64, f64)>,
    /// Observations in all.
    pub count: f64,
    /// Their sum.
    pub sum: f64,
}

/// A share of observations read from buckets: the estimate, and the range
/// it must lie in when the target is not a bucket bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Within {
    /// Linear within the bucket the target falls in.
    pub estimate: f64,
    /// The least it can be.
    pub low: f64,
    /// The most it can be.
    pub high: f64,
}

impl Distribution {
    /// What histogram `now` gained since `before` (`None`: since it
    /// started). A reading lower than the one before (a restart) counts
    /// from zero.
    pub fn between(before: Option<&Value>, now: &Value) -> Option<Distribution> {
        let Value::Histogram {
            buckets,
            native,
            count,
            sum,
        } = now
        else {
            return None;
        };
        let previous = match before {
            Some(Value::Histogram {
                buckets: b,
                native: n,
                count: c,
                sum: s,
            }) if *c <= *count => Some((b, n, *c, *s)),
            _ => None,
        };
        let (count_then, sum_then) = previous.map_or((0.0, 0.0), |p| (p.2, p.3));
        let buckets = match (native, previous.map(|p| p.1)) {
            (Some(native), Some(Some(then))) => native_between(Some(then), native),
            (Some(native), _) if previous.is_none() => native_between(None, native),
            _ => classic_between(previous.map(|p| p.0.as_slice()), buckets),
        };
        Some(Distribution {
            buckets,
            count: count - count_then,
            sum: sum - sum_then,
        })
    }

    /// All of `parts` together: the distribution of the union of their
    /// observations.
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Distribution>) -> Distribution {
        let mut merged = Distribution::default();
        for part in parts {
            merged.buckets.extend_from_slice(&part.buckets);
            merged.count += part.count;
            merged.sum += part.sum;
        }
        merged
    }

    /// The share of observations at most `target` (0 to 1), `None` without
    /// observations: linear within the bucket the target falls in, as
    /// `histogram_quantile` reads a bucket, with the least and most it can
    /// be (all of that bucket above the target, or all of it below).
    pub fn share_within(&self, target: f64) -> Option<Within> {
        let total: f64 = self.buckets.iter().map(|b| b.2).sum();
        if total <= 0.0 {
            return None;
        }
        let (mut below, mut straddling, mut estimate) = (0.0, 0.0, 0.0);
        for &(lower, upper, count) in &self.buckets {
            if upper <= target {
                below += count;
            } else if lower < target {
                straddling += count;
                // The +Inf bucket is a point at its lower bound.
                estimate += if upper.is_finite() {
                    count * (target - lower) / (upper - lower)
                } else {
                    count
                };
            }
        }
        Some(Within {
            estimate: (below + estimate) / total,
            low: below / total,
            high: (below + straddling) / total,
        })
    }

    /// The `q` quantile (0 to 1), `None` without observations. Buckets
    /// that overlap (replicas with different bounds) are spread evenly
    /// over their width, so the result is the quantile of the union.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total: f64 = self.buckets.iter().map(|b| b.2).sum();
        if total <= 0.0 {
            return None;
        }
        // The +Inf bucket is a point at its lower bound.
        let finite = |b: &(f64, f64, f64)| if b.1.is_finite() { *b } else { (b.0, b.0, b.2) };
        let buckets: Vec<(f64, f64, f64)> = self.buckets.iter().map(finite).collect();
        let mut edges: Vec<f64> = buckets.iter().flat_map(|b| [b.0, b.1]).collect();
        edges.sort_by(f64::total_cmp);
        edges.dedup();
        let rank = q.clamp(0.0, 1.0) * total;
        let mut seen = 0.0;
        // Point masses first at each edge, then each segment's share.
        for (i, &edge) in edges.iter().enumerate() {
            let point: f64 = buckets
                .iter()
                .filter(|b| b.0 == b.1 && b.0 == edge)
                .map(|b| b.2)
                .sum();
            if point > 0.0 && seen + point >= rank {
                return Some(edge);
            }
            seen += point;
            let Some(&next) = edges.get(i + 1) else {
                break;
            };
            let mass: f64 = buckets
                .iter()
                .filter(|b| b.0 < b.1 && b.0 <= edge && next <= b.1)
                .map(|b| b.2 * (next - edge) / (b.1 - b.0))
                .sum();
            if mass > 0.0 && seen + mass >= rank {
                return Some(edge + (next - edge) * (rank - seen) / mass);
            }
            seen += mass;
        }
        edges.last().copied()
    }
}

/// Classic buckets gained: cumulative counts subtracted bound by bound.
fn classic_between(before: Option<&[(f64, f64)]>, now: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    let then = |bound: f64| {
        before
            .and_then(|b| b.iter().find(|(le, _)| *le == bound))
            .map_or(0.0, |(_, c)| *c)
    };
    let mut out = Vec::new();
    let (mut lower, mut below_now, mut below_then) = (0.0_f64, 0.0, 0.0);
    for &(le, cumulative) in now {
        let cumulative_then = then(le);
        let gained = (cumulative - below_now) - (cumulative_then - below_then);
        // Prometheus's rule: the first bucket starts at 0 when its bound is
        // positive, else at the bound itself.
        let start = if out.is_empty() && le <= 0.0 {
            le
        } else {
            lower
        };
        if gained > 0.0 {
            out.push((start, le, gained));
        }
        (lower, below_now, below_then) = (le, cumulative, cumulative_then);
    }
    out
}

/// Native buckets gained, at the coarser schema of the two readings.
fn native_between(before: Option<&Native>, now: &Native) -> Vec<(f64, f64, f64)> {
    let schema = before.map_or(now.schema, |b| b.schema.min(now.schema));
    let now_at = at_schema(now, schema);
    let then_at = before.map(|b| at_schema(b, schema)).unwrap_or_default();
    let base = 2_f64.powf(2_f64.powi(-schema));
    let mut out = Vec::new();
    for (&(negative, index), &count) in &now_at {
        let gained = count.saturating_sub(*then_at.get(&(negative, index)).unwrap_or(&0));
        if gained == 0 {
            continue;
        }
        let (low, high) = (base.powi(index - 1), base.powi(index));
        out.push(if negative {
            (-high, -low, gained as f64)
        } else {
            (low, high, gained as f64)
        });
    }
    let zero = now
        .zero_count
        .saturating_sub(before.map_or(0, |b| b.zero_count));
    if zero > 0 {
        out.push((-now.zero_threshold, now.zero_threshold, zero as f64));
    }
    out
}

/// Bucket counts by `(negative, index)` at `schema` (at most the
/// histogram's own): `2^d` buckets become one.
fn at_schema(native: &Native, schema: i32) -> BTreeMap<(bool, i32), u64> {
    let d = (native.schema - schema).clamp(0, 31);
    let mut out = BTreeMap::new();
    for (negative, side) in [(false, &native.positive), (true, &native.negative)] {
        for (&index, &count) in side {
            *out.entry((negative, ((index - 1) >> d) + 1)).or_insert(0) += count;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classic(buckets: &[(f64, f64)], count: f64, sum: f64) -> Value {
        Value::Histogram {
            buckets: buckets.to_vec(),
            native: None,
            count,
            sum,
        }
    }

    #[test]
    fn a_classic_quantile_interpolates_within_its_bucket() {
        // 10 observations in (0, 1], 10 in (1, 2].
        let now = classic(
            &[(1.0, 10.0), (2.0, 20.0), (f64::INFINITY, 20.0)],
            20.0,
            25.0,
        );
        let d = Distribution::between(None, &now).unwrap();
        assert_eq!(d.quantile(0.5), Some(1.0));
        assert_eq!(d.quantile(0.75), Some(1.5));
        assert_eq!(d.quantile(0.25), Some(0.5));
    }

    #[test]
    fn deltas_subtract_the_reading_before() {
        let before = classic(
            &[(1.0, 10.0), (2.0, 10.0), (f64::INFINITY, 10.0)],
            10.0,
            5.0,
        );
        let now = classic(
            &[(1.0, 10.0), (2.0, 14.0), (f64::INFINITY, 14.0)],
            14.0,
            11.0,
        );
        let d = Distribution::between(Some(&before), &now).unwrap();
        assert_eq!(d.buckets, [(1.0, 2.0, 4.0)]);
        assert_eq!((d.count, d.sum), (4.0, 6.0));
        // A restart (fewer observations than before) counts from zero.
        let restarted = Distribution::between(Some(&now), &before).unwrap();
        assert_eq!(restarted.count, 10.0);
    }

    #[test]
    fn merged_replicas_give_the_quantile_of_the_union() {
        let bounds = |counts: [f64; 3]| {
            classic(
                &[
                    (1.0, counts[0]),
                    (2.0, counts[0] + counts[1]),
                    (f64::INFINITY, counts[0] + counts[1] + counts[2]),
                ],
                counts.iter().sum(),
                0.0,
            )
        };
        let parts: Vec<Distribution> = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]]
            .into_iter()
            .map(|c| Distribution::between(None, &bounds(c)).unwrap())
            .collect();
        let all = Distribution::merge(&parts);
        assert_eq!(all.count, 30.0);
        // The union: a third in each bucket; the median is the middle of
        // (1, 2], not an average of the three medians (0.5, 1.5, 2).
        assert_eq!(all.quantile(0.5), Some(1.5));
        assert_eq!(all.quantile(0.99), Some(2.0));
    }

    #[test]
    fn native_buckets_read_at_the_coarser_schema() {
        let native = |schema, positive: &[(i32, u64)]| Native {
            schema,
            zero_count: 0,
            zero_threshold: 0.0,
            positive: positive.iter().copied().collect(),
            negative: BTreeMap::new(),
        };
        // Schema 1: buckets (2^((i-1)/2), 2^(i/2)]. Index 3 and 4 merge into
        // schema 0's index 2, (2, 4].
        let before = native(1, &[(3, 1)]);
        let now = native(0, &[(2, 3)]);
        let gained = native_between(Some(&before), &now);
        assert_eq!(gained, [(2.0, 4.0, 2.0)]);
    }
}
