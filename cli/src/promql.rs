//! The PromQL the dashboard and the rules share, so a panel and the rule
//! behind it compute the same thing.

use crate::sets::Instrument;

/// The label matchers of NeMo Lens's dashboards: its `service` and `run_id`
/// variables on the resource labels of every series.
pub const DASHBOARD_MATCHERS: &str = r#"service_name=~"$service",nemo_run_id=~"$run_id""#;

/// The quantiles charted and recorded.
pub const QUANTILES: [f64; 3] = [0.5, 0.95, 0.99];

/// Labels a run is identified by in rules.
pub const RUN_LABELS: [&str; 2] = ["service_name", "nemo_run_id"];

/// `metric{matchers}`, or `metric` when there are none.
pub fn selector(metric: &str, matchers: &str) -> String {
    if matchers.is_empty() {
        metric.to_owned()
    } else {
        format!("{metric}{{{matchers}}}")
    }
}

/// `by (a, b)` over `labels`.
fn by(labels: &[String]) -> String {
    format!("by ({})", labels.join(", "))
}

/// The grouping of a chart or rule: `first`, then the labels that tell
/// the instrument's fields apart.
pub fn grouping(first: &[&str], instrument: &Instrument) -> Vec<String> {
    first
        .iter()
        .map(|l| (*l).to_owned())
        .chain(instrument.split_labels())
        .collect()
}

/// `histogram_quantile(q, sum by (le, ..) (rate(x_bucket{..}[window])))`;
/// for an exponential histogram, that or the same of the native histogram
/// `x`, in parentheses, so one expression serves a Prometheus with native
/// histograms and one without.
pub fn quantile(
    q: f64,
    instrument: &Instrument,
    matchers: &str,
    window: &str,
    group: &[String],
) -> Option<String> {
    let bucket = instrument.prometheus.bucket()?;
    let mut labels = vec!["le".to_owned()];
    labels.extend(group.iter().cloned());
    let classic = format!(
        "histogram_quantile({q}, sum {} (rate({}[{window}])))",
        by(&labels),
        selector(bucket, matchers)
    );
    if !instrument.is_exponential() {
        return Some(classic);
    }
    Some(format!(
        "({classic} or histogram_quantile({q}, sum {} (rate({}[{window}]))))",
        by(group),
        selector(&instrument.prometheus.family, matchers)
    ))
}

/// `sum by (..) (rate(x[window]))` of one sample name.
pub fn rate(sample: &str, matchers: &str, window: &str, group: &[String]) -> String {
    format!(
        "sum {} (rate({}[{window}]))",
        by(group),
        selector(sample, matchers)
    )
}

/// The instrument that counts judged requests (goodput).
pub const JUDGED: &str = "nemo.inference.requests.judged";
/// The label of a judged request's result.
pub const SLO_RESULT_LABEL: &str = "nemo_inference_slo_result";
/// The result of a request that met every objective.
pub const MET: &str = "met";

/// `matchers` with `extra` added.
pub fn with_matcher(matchers: &str, extra: &str) -> String {
    if matchers.is_empty() {
        extra.to_owned()
    } else {
        format!("{matchers},{extra}")
    }
}

/// The share of judged requests that were not good over `window`: the
/// error ratio an availability-style SLO on goodput burns its budget by.
/// `sample` is the judged counter's sample name.
pub fn goodput_error_ratio(sample: &str, matchers: &str, window: &str, group: &[String]) -> String {
    judged_share(sample, "!=", matchers, window, group)
}

/// The share of judged requests that met every objective over `window`.
pub fn attainment(sample: &str, matchers: &str, window: &str, group: &[String]) -> String {
    judged_share(sample, "=", matchers, window, group)
}

/// The share of judged requests whose result is (`=`) or is not (`!=`)
/// `met`.
fn judged_share(sample: &str, op: &str, matchers: &str, window: &str, group: &[String]) -> String {
    let part = with_matcher(matchers, &format!("{SLO_RESULT_LABEL}{op}\"{MET}\""));
    format!(
        "({} / {})",
        rate(sample, &part, window, group),
        rate(sample, matchers, window, group)
    )
}

/// `{__name__=~"a|b"}`: one sample of each instrument, the series that show
/// a run is reporting.
pub fn any_of(instruments: &[&Instrument]) -> String {
    let names: Vec<&str> = instruments
        .iter()
        .map(|i| i.prometheus.count().unwrap_or(&i.prometheus.family))
        .collect();
    format!("{{__name__=~\"{}\"}}", names.join("|"))
}

/// `p99` for 0.99, `p50` for 0.5.
pub fn quantile_tag(q: f64) -> String {
    let percent = q * 100.0;
    format!(
        "p{}",
        format!("{percent:.1}")
            .trim_end_matches(".0")
            .replace('.', "_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        assert_eq!(quantile_tag(0.5), "p50");
        assert_eq!(quantile_tag(0.99), "p99");
        assert_eq!(quantile_tag(0.999), "p99_9");
    }
}
