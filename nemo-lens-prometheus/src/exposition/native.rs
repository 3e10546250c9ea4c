//! An OpenTelemetry exponential histogram as Prometheus reads it: a native
//! histogram (schema, zero bucket, spans and deltas), and, for the text
//! format, which has no native histograms, classic cumulative buckets at
//! powers of two.

use super::families::{Buckets, Exponential};

/// The finest schema Prometheus reads (its bound tables stop there: 2.42
/// stores a finer one and then panics on every query touching it).
const SCHEMA_MAX: i32 = 8;
/// The coarsest one.
const SCHEMA_MIN: i32 = -4;
/// Width of the zero bucket. The SDK reports 0 (exact zeros only), but
/// Prometheus 2.42 takes a histogram with no bucket counts yet and a zero
/// width for a classic one, and then its whole family: so the smallest
/// width that is a bucket boundary at every schema, as client_golang uses.
pub(crate) const ZERO_THRESHOLD: f64 = 2.938_735_877_055_719e-39; // 2^-128

/// A native histogram's buckets on one side: spans of consecutive bucket
/// indices, and each bucket's count as a delta from the one before
/// (across spans; the first is absolute).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NativeSide {
    /// `(offset, length)`: the first span's offset is its first index, a
    /// later one's the gap since the previous span.
    pub spans: Vec<(i32, u32)>,
    pub deltas: Vec<i64>,
}

/// The native-histogram fields of an exponential point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Native {
    pub schema: i32,
    pub zero_count: u64,
    pub positive: NativeSide,
    pub negative: NativeSide,
}

/// The native histogram of `point`, or `None` when its scale is coarser
/// than Prometheus reads (below -4: values spanning more than 2^(16·160),
/// which an f64 cannot).
pub(crate) fn native(point: &Exponential) -> Option<Native> {
    let scale = i32::from(point.scale);
    if scale < SCHEMA_MIN {
        return None;
    }
    // Finer scales merge exactly into schema 8: 2^(scale-8) buckets each.
    let shift = (scale - SCHEMA_MAX).max(0) as u32;
    Some(Native {
        schema: scale.min(SCHEMA_MAX),
        zero_count: point.zero_count,
        positive: side(&point.positive, shift),
        negative: side(&point.negative, shift),
    })
}

/// One side in Prometheus's indexing: an OpenTelemetry bucket `j` covers
/// `(b^j, b^(j+1)]`, a Prometheus bucket `k` covers `(b^(k-1), b^k]`, so
/// `k = j + 1` (after merging `2^shift` buckets into one: `(j >> shift) + 1`).
/// Empty buckets are left out, which splits spans.
fn side(buckets: &Buckets, shift: u32) -> NativeSide {
    let mut merged: Vec<(i64, u64)> = Vec::new();
    for (i, count) in buckets.counts.iter().enumerate() {
        let index = ((i64::from(buckets.offset) + i as i64) >> shift) + 1;
        match merged.last_mut() {
            Some((last, total)) if *last == index => *total += count,
            _ => merged.push((index, *count)),
        }
    }
    let mut native = NativeSide::default();
    let mut previous_index: Option<i64> = None;
    let mut previous_count = 0i64;
    for (index, count) in merged.into_iter().filter(|(_, count)| *count > 0) {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        match previous_index {
            Some(prev) if index == prev + 1 => {
                if let Some((_, length)) = native.spans.last_mut() {
                    *length += 1;
                }
            }
            Some(prev) => native.spans.push(((index - prev - 1) as i32, 1)),
            None => native.spans.push((index as i32, 1)),
        }
        native.deltas.push(count - previous_count);
        previous_count = count;
        previous_index = Some(index);
    }
    native
}

/// Classic cumulative buckets for the text format: `(upper bound,
/// cumulative count)` at powers of two, exact since every power of two is a
/// bucket boundary at any scale of at least 0 (and at a coarser scale, the
/// powers that are boundaries are the ones listed). Values up to 0
/// (negative ones and zeros) share the bucket `le="0"`; `+Inf` is the
/// encoder's. Only the range the point's buckets cover is listed, so a
/// series grows buckets as its values spread; when the SDK coarsens the
/// scale below 0, powers that are no longer bucket boundaries drop out.
pub(crate) fn classic(point: &Exponential) -> Vec<(f64, u64)> {
    let mut buckets = Vec::new();
    let mut cumulative: u64 = point.negative.counts.iter().sum::<u64>() + point.zero_count;
    if cumulative > 0 {
        buckets.push((0.0, cumulative));
    }
    let scale = i64::from(point.scale);
    // The power of two at or above each bucket's upper bound 2^((j+1)/2^s).
    let mut by_power: Vec<(i64, u64)> = Vec::new();
    for (i, count) in point.positive.counts.iter().enumerate() {
        if *count == 0 {
            continue;
        }
        let upper = i64::from(point.positive.offset) + i as i64 + 1;
        let power = if scale >= 0 {
            ceil_div(upper, 1 << scale)
        } else {
            upper << -scale
        };
        match by_power.last_mut() {
            Some((last, total)) if *last == power => *total += count,
            _ => by_power.push((power, *count)),
        }
    }
    let (Some(&(first, _)), Some(&(last, _))) = (by_power.first(), by_power.last()) else {
        return buckets;
    };
    // Every power in between is a boundary too (at a coarse scale, every
    // 2^-scale-th): listing them keeps the bucket set of a series stable.
    let step = if scale >= 0 { 1 } else { 1 << -scale };
    let mut counts = by_power.into_iter().peekable();
    let mut power = first;
    while power <= last {
        while let Some((_, count)) = counts.next_if(|(p, _)| *p <= power) {
            cumulative += count;
        }
        // Past 2^1023 the bound is +Inf, which the encoder adds anyway.
        if power > 1023 {
            break;
        }
        // exp2 is exact for every power down to 2^-1074 (powi is not).
        let bound = (power.max(-1074) as f64).exp2();
        buckets.push((bound, cumulative));
        power += step;
    }
    buckets
}

/// `ceil(a / b)` for a positive `b`.
fn ceil_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(scale: i8, offset: i32, counts: &[u64]) -> Exponential {
        Exponential {
            count: counts.iter().sum(),
            sum: 0.0,
            scale,
            zero_count: 0,
            positive: Buckets {
                offset,
                counts: counts.to_vec(),
            },
            negative: Buckets::default(),
        }
    }

    #[test]
    fn the_specifications_example() {
        // "if Positive.Offset is 3 and Positive.BucketCounts is 10, 0, 0, 20,
        // 5, 2 … PositiveSpans will be {Offset: 4, Length: 1}, {Offset: 2,
        // Length: 3} and PositiveDeltas will be 10, 10, -15, -3."
        let native = native(&point(3, 3, &[10, 0, 0, 20, 5, 2])).unwrap();
        assert_eq!(native.schema, 3);
        assert_eq!(native.positive.spans, [(4, 1), (2, 3)]);
        assert_eq!(native.positive.deltas, [10, 10, -15, -3]);
    }

    #[test]
    fn classic_bounds_hold_at_the_ends_of_the_f64_range() {
        // Subnormal values: bucket -1075 at scale 0 ends at 2^-1074, the
        // smallest positive f64, not at 0 (where `le="0"` already is).
        let tiny = classic(&point(0, -1075, &[3]));
        assert_eq!(tiny, [((-1074f64).exp2(), 3)]);
        assert!(tiny[0].0 > 0.0);
        // Values past 2^1023 have no finite power of two above them: they
        // count in `+Inf`, which the encoder adds.
        let huge = classic(&point(0, 1022, &[1, 1]));
        assert_eq!(huge, [((1023f64).exp2(), 1)]);
    }

    #[test]
    fn a_scale_finer_than_8_merges_into_schema_8() {
        // Scale 10: four buckets per schema-8 bucket. OpenTelemetry buckets
        // -1..=6 merge as (-1) -> 0, (0..=3) -> 1, (4..=6) -> 2.
        let merged = native(&point(10, -1, &[1, 1, 1, 1, 1, 2, 2, 2])).unwrap();
        assert_eq!(merged.schema, 8);
        assert_eq!(merged.positive.spans, [(0, 3)]);
        assert_eq!(merged.positive.deltas, [1, 3, 2]);
        assert!(native(&point(-5, 0, &[1])).is_none(), "coarser than -4");
    }

    #[test]
    fn classic_buckets_at_powers_of_two_are_exact() {
        // Scale 1: bucket j covers (2^(j/2), 2^((j+1)/2)]. Offset 0:
        // (1, 1.41], (1.41, 2], (2, 2.83], (2.83, 4], ..
        let fine = classic(&point(1, 0, &[1, 2, 0, 4, 0, 0, 8]));
        // Powers: j=0,1 -> 2^1; j=3 -> 2^2; j=6 -> 2^4 (2^3 listed between).
        assert_eq!(fine, [(2.0, 3), (4.0, 7), (8.0, 7), (16.0, 15)]);
        // A coarse scale: bucket j covers (4^j, 4^(j+1)]: only even powers.
        let coarse = classic(&point(-1, 0, &[1, 0, 1]));
        assert_eq!(coarse, [(4.0, 1), (16.0, 1), (64.0, 2)]);
        // Zeros and negatives under le="0".
        let mut signed = point(0, -1, &[1]);
        signed.zero_count = 2;
        signed.negative = Buckets {
            offset: 0,
            counts: vec![3],
        };
        assert_eq!(classic(&signed), [(0.0, 5), (1.0, 6)]);
    }
}
