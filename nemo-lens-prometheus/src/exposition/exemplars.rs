//! Exemplars placed on the buckets of a Prometheus histogram: each on the
//! bucket its value falls in, the latest where several do (what the
//! OpenTelemetry compatibility specification asks of a one-per-bucket
//! format), never one whose value is not a finite number.

use nemo_lens_core::exemplar::Exemplar;

/// For each of `buckets` (`(upper bound, cumulative count)`, ascending,
/// `+Inf` implied after them when absent) the exemplar it shows; empty
/// (nothing to place, nothing allocated) without exemplars. `exemplars`
/// come oldest first.
pub(crate) fn by_bucket<'a>(
    buckets: &[(f64, u64)],
    exemplars: &'a [Exemplar],
) -> Vec<Option<&'a Exemplar>> {
    if exemplars.is_empty() {
        return Vec::new();
    }
    let has_inf = buckets
        .last()
        .is_some_and(|(b, _)| b.is_infinite() && *b > 0.0);
    let mut placed = vec![None; buckets.len() + usize::from(!has_inf)];
    for exemplar in exemplars.iter().filter(|e| e.value.is_finite()) {
        // The first bucket whose bound is at least the value, as buckets
        // count a record (`le` is inclusive).
        let at = buckets.partition_point(|(bound, _)| *bound < exemplar.value);
        if let Some(slot) = placed.get_mut(at)
            && slot.is_none_or(|held: &Exemplar| held.time <= exemplar.time)
        {
            *slot = Some(exemplar);
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    fn at(value: f64, secs: u64) -> Exemplar {
        Exemplar {
            value,
            time: UNIX_EPOCH + Duration::from_secs(secs),
            span: None,
        }
    }

    #[test]
    fn each_lands_in_its_bucket_and_the_latest_wins() {
        let held = [
            at(0.5, 1),
            at(1.0, 2),
            at(0.7, 3),
            at(9.0, 4),
            at(f64::NAN, 5),
        ];
        let placed = by_bucket(&[(0.5, 0), (1.0, 0)], &held);
        let values: Vec<Option<f64>> = placed.iter().map(|e| e.map(|e| e.value)).collect();
        // 0.5 in (-inf, 0.5]; 1.0 then 0.7 in (0.5, 1], the later kept; 9 in +Inf.
        assert_eq!(values, [Some(0.5), Some(0.7), Some(9.0)]);
        let with_inf = by_bucket(&[(1.0, 0), (f64::INFINITY, 0)], &held);
        assert_eq!(with_inf.len(), 2);
        assert_eq!(with_inf[1].map(|e| e.value), Some(9.0));
        assert!(by_bucket(&[(1.0, 0)], &[]).is_empty());
    }
}
