//! Prometheus recording rules for the quantiles the dashboard charts, and
//! alerting rules.

use crate::goodput_rules::GoodputRules;
use crate::promql::{self, QUANTILES, RUN_LABELS};
use crate::sets::{Instrument, InstrumentSet};
use nemo_lens::InstrumentKind;

/// The window of rates in rules: long enough for a 1 min scrape interval.
const WINDOW: &str = "5m";

/// A `record:` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingRule {
    /// The series it writes, `nemo_lens:<family>:p99_rate5m`.
    pub record: String,
    /// What it computes.
    pub expr: String,
}

/// An `alert:` rule, written as a measure and a condition on it so that
/// tests can check the measure has data while the alert is quiet.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
    /// The alert name.
    pub alert: String,
    /// What is watched: non-empty whenever the watched series exist.
    pub measure: String,
    /// Appended to the measure to make the alert expression (`> 10`).
    pub condition: String,
    /// How long the condition must hold.
    pub for_: String,
    /// `severity` label.
    pub severity: &'static str,
    /// `summary` annotation.
    pub summary: String,
    /// `description` annotation.
    pub description: String,
}

impl AlertRule {
    /// The alert expression: measure, then condition.
    pub fn expr(&self) -> String {
        format!("{} {}", self.measure, self.condition)
    }
}

/// A p-quantile latency alert on a histogram, by name: it is generated only
/// when a set has that instrument.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyAlert {
    /// The instrument name, e.g. `gen_ai.server.request.duration`.
    pub instrument: String,
    /// The quantile, e.g. 0.99.
    pub quantile: f64,
    /// The threshold in the instrument's unit.
    pub threshold: f64,
}

/// Which alerts to generate and their thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertPolicy {
    /// How long a run must have been silent, after reporting within the
    /// last hour, before it is reported as stopped.
    pub stopped_for: String,
    /// Latency alerts.
    pub latency: Vec<LatencyAlert>,
    /// Histograms whose measurements carry `error.type` on failure (the
    /// GenAI conventions put it on `gen_ai.server.request.duration`), with
    /// the error ratio that fires; any histogram of the sets that declares
    /// an `error.type` attribute is added with the first threshold.
    pub error_ratio: Vec<(String, f64)>,
}

impl Default for AlertPolicy {
    /// p99 request duration over 10 s, p99 time to first token over 2 s,
    /// request error ratio over 5 %, a run silent for 5 minutes.
    fn default() -> Self {
        AlertPolicy {
            stopped_for: "5m".to_owned(),
            latency: vec![
                LatencyAlert {
                    instrument: "gen_ai.server.request.duration".to_owned(),
                    quantile: 0.99,
                    threshold: 10.0,
                },
                LatencyAlert {
                    instrument: "gen_ai.server.time_to_first_token".to_owned(),
                    quantile: 0.99,
                    threshold: 2.0,
                },
            ],
            error_ratio: vec![("gen_ai.server.request.duration".to_owned(), 0.05)],
        }
    }
}

/// A rule file: what `promtool check rules` and Prometheus's `rule_files`
/// read.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleFile {
    /// The `nemo-lens-quantiles` group.
    pub recording: Vec<RecordingRule>,
    /// The `nemo-lens-alerts` group.
    pub alerts: Vec<AlertRule>,
    /// The `nemo-lens-goodput` group (`rules --slo`): empty unless asked
    /// for.
    pub goodput: GoodputRules,
}

/// Recording rules for p50/p95/p99 of every histogram of `sets` (by run and
/// by the labels that tell its fields apart, over 5 minutes), and the
/// alerts of `policy` for the instruments the sets have, plus one for a run
/// that stopped reporting.
pub fn rules(sets: &[InstrumentSet], policy: &AlertPolicy) -> RuleFile {
    // An instrument two sets record into (token usage: the GenAI server and
    // client sets) gets one rule: Prometheus rejects duplicate records.
    let mut instruments: Vec<Instrument> = Vec::new();
    for instrument in sets.iter().flat_map(|s| s.instruments()) {
        if !instruments
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(instrument.name))
        {
            instruments.push(instrument);
        }
    }
    let find = |name: &str| {
        instruments
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name) && i.kind == InstrumentKind::Histogram)
    };
    let mut recording = Vec::new();
    for i in &instruments {
        let group = promql::grouping(&RUN_LABELS, i);
        for q in QUANTILES {
            if let Some(expr) = promql::quantile(q, i, "", WINDOW, &group) {
                recording.push(RecordingRule {
                    record: format!(
                        "nemo_lens:{}:{}_rate{WINDOW}",
                        i.prometheus.family,
                        promql::quantile_tag(q)
                    ),
                    expr,
                });
            }
        }
    }

    let mut alerts = Vec::new();
    if !instruments.is_empty() {
        alerts.push(stopped_reporting(&instruments, policy));
    }
    for latency in &policy.latency {
        if let Some(i) = find(&latency.instrument) {
            alerts.extend(latency_alert(i, latency));
        }
    }
    let mut ratios = policy.error_ratio.clone();
    for i in &instruments {
        // Durations that carry error.type measure requests and their
        // failures; a token histogram that carries it too (the GenAI draft's
        // per-call histograms) would repeat the same ratio.
        let declares = i.kind == InstrumentKind::Histogram
            && nemo_lens_naming::is_duration(i.unit)
            && i.attribute_keys.contains(&"error.type");
        if declares && !ratios.iter().any(|(n, _)| n.eq_ignore_ascii_case(i.name)) {
            let threshold = policy.error_ratio.first().map_or(0.05, |(_, t)| *t);
            ratios.push((i.name.to_owned(), threshold));
        }
    }
    for (name, threshold) in &ratios {
        if let Some(i) = find(name) {
            alerts.push(error_ratio(i, *threshold));
        }
    }
    RuleFile {
        recording,
        alerts,
        goodput: GoodputRules::default(),
    }
}

fn run_group() -> String {
    RUN_LABELS.join(", ")
}

/// A run that had series within the last hour and has none now. Grouping
/// before the subquery keeps series of different metrics from colliding.
fn stopped_reporting(instruments: &[Instrument], policy: &AlertPolicy) -> AlertRule {
    let reporting = promql::any_of(&instruments.iter().collect::<Vec<_>>());
    let now = format!("group by ({}) ({reporting})", run_group());
    AlertRule {
        alert: "NemoLensRunStoppedReporting".to_owned(),
        measure: format!("max_over_time({now}[1h:1m])"),
        condition: format!("unless on ({}) {now}", run_group()),
        for_: policy.stopped_for.clone(),
        severity: "warning",
        summary:
            "Run {{ $labels.nemo_run_id }} of {{ $labels.service_name }} stopped reporting metrics"
                .to_owned(),
        description: "No nemo-lens series of this run for a while after it reported within the \
                      last hour: the job crashed, hung, lost its exporter, or finished."
            .to_owned(),
    }
}

fn latency_alert(i: &Instrument, latency: &LatencyAlert) -> Option<AlertRule> {
    let group: Vec<String> = RUN_LABELS.iter().map(|l| (*l).to_owned()).collect();
    let measure = promql::quantile(latency.quantile, i, "", WINDOW, &group)?;
    let tag = promql::quantile_tag(latency.quantile);
    Some(AlertRule {
        alert: format!("NemoLens{}{}High", camel(i.name), tag.to_ascii_uppercase()),
        measure,
        condition: format!("> {}", latency.threshold),
        for_: "10m".to_owned(),
        severity: "warning",
        summary: format!(
            "{tag} of {} above {} {} for {{{{ $labels.service_name }}}}",
            i.name, latency.threshold, i.unit
        ),
        description: format!(
            "{tag} of {} over {WINDOW} is {{{{ $value }}}} {}, above {} {}, in run {{{{ $labels.nemo_run_id }}}}.",
            i.name, i.unit, latency.threshold, i.unit
        ),
    })
}

/// Failed measurements over all, by run. The failed series exist only once
/// something failed, so a run without failures has a ratio of 0 rather than
/// no value.
fn error_ratio(i: &Instrument, threshold: f64) -> AlertRule {
    let count = i.prometheus.count().unwrap_or(&i.prometheus.family);
    let group: Vec<String> = RUN_LABELS.iter().map(|l| (*l).to_owned()).collect();
    let all = promql::rate(count, "", WINDOW, &group);
    let failed = promql::rate(count, r#"error_type!="""#, WINDOW, &group);
    AlertRule {
        alert: format!("NemoLens{}ErrorRatioHigh", camel(i.name)),
        measure: format!("({failed} or 0 * {all}) / {all}"),
        condition: format!("> {threshold}"),
        for_: "10m".to_owned(),
        severity: "warning",
        summary: format!(
            "More than {}% of {} measurements failed for {{{{ $labels.service_name }}}}",
            threshold * 100.0,
            i.name
        ),
        description: format!(
            "{{{{ $value | humanizePercentage }}}} of {} measurements carried error.type over {WINDOW} in run {{{{ $labels.nemo_run_id }}}}.",
            i.name
        ),
    }
}

/// `gen_ai.server.request.duration` as `GenAiServerRequestDuration`.
pub(crate) fn camel(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A YAML double-quoted scalar: JSON string syntax is valid YAML.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

impl RuleFile {
    /// Every expression with its rule name: recording rules, then each
    /// alert's full expression.
    pub fn expressions(&self) -> Vec<(String, String)> {
        self.recording
            .iter()
            .chain(&self.goodput.recording)
            .map(|r| (r.record.clone(), r.expr.clone()))
            .chain(
                self.alerts
                    .iter()
                    .chain(&self.goodput.alerts)
                    .map(|a| (a.alert.clone(), a.expr())),
            )
            .collect()
    }

    /// The rule file in YAML, as `promtool check rules` reads it.
    pub fn to_yaml(&self) -> String {
        let mut out = String::from(
            "# Generated by `nemo-lens rules` from the nemo-lens instrument declarations.\ngroups:\n",
        );
        out.push_str("  - name: nemo-lens-quantiles\n    rules:\n");
        if self.recording.is_empty() {
            out.truncate(out.len() - "    rules:\n".len());
            out.push_str("    rules: []\n");
        }
        write_recording(&mut out, &self.recording);
        out.push_str("  - name: nemo-lens-alerts\n    rules:\n");
        if self.alerts.is_empty() {
            out.truncate(out.len() - "    rules:\n".len());
            out.push_str("    rules: []\n");
        }
        write_alerts(&mut out, &self.alerts);
        if !self.goodput.recording.is_empty() {
            // Recording rules first: each alert reads the ratios recorded
            // above it, in the same group's evaluation.
            out.push_str("  - name: nemo-lens-goodput\n    rules:\n");
            write_recording(&mut out, &self.goodput.recording);
            write_alerts(&mut out, &self.goodput.alerts);
        }
        out
    }
}

fn write_recording(out: &mut String, recording: &[RecordingRule]) {
    for r in recording {
        out.push_str(&format!(
            "      - record: {}\n        expr: {}\n",
            quoted(&r.record),
            quoted(&r.expr)
        ));
    }
}

fn write_alerts(out: &mut String, alerts: &[AlertRule]) {
    for a in alerts {
        out.push_str(&format!(
                "      - alert: {}\n        expr: {}\n        for: {}\n        labels:\n          severity: {}\n        annotations:\n          summary: {}\n          description: {}\n",
                quoted(&a.alert),
                quoted(&a.expr()),
                quoted(&a.for_),
                quoted(a.severity),
                quoted(&a.summary),
                quoted(&a.description),
            ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_sets;
    use nemo_lens::telemetry::HistogramAggregation;

    /// The p99 recording rule of the GenAI server request duration.
    fn request_p99(file: &RuleFile) -> &str {
        &file
            .recording
            .iter()
            .find(|r| r.record == "nemo_lens:gen_ai_server_request_duration_seconds:p99_rate5m")
            .expect("the request duration's p99 rule")
            .expr
    }

    #[test]
    fn exponential_histograms_are_read_as_classic_or_native() {
        let sets: Vec<_> = builtin_sets()
            .into_iter()
            .map(|s| s.for_histogram_aggregation(HistogramAggregation::Base2Exponential))
            .collect();
        let file = rules(&sets, &AlertPolicy::default());
        assert_eq!(
            request_p99(&file),
            "(histogram_quantile(0.99, sum by (le, service_name, nemo_run_id) \
             (rate(gen_ai_server_request_duration_seconds_bucket[5m]))) or \
             histogram_quantile(0.99, sum by (service_name, nemo_run_id) \
             (rate(gen_ai_server_request_duration_seconds[5m]))))"
        );
        // Counters and gauges are untouched.
        assert!(file
            .recording
            .iter()
            .all(|r| !r.expr.contains("_total[5m]))) or")));
    }

    #[test]
    fn quantiles_of_every_histogram_and_the_default_alerts() {
        let sets = builtin_sets();
        let file = rules(&sets, &AlertPolicy::default());
        let mut histograms: Vec<&str> = sets
            .iter()
            .flat_map(|s| s.instruments())
            .filter(|i| i.kind == InstrumentKind::Histogram)
            .map(|i| i.name)
            .collect();
        histograms.sort_unstable();
        histograms.dedup();
        assert_eq!(file.recording.len(), 3 * histograms.len());
        let mut records: Vec<&str> = file.recording.iter().map(|r| r.record.as_str()).collect();
        records.sort_unstable();
        records.dedup();
        assert_eq!(records.len(), file.recording.len(), "no duplicate records");
        assert_eq!(
            request_p99(&file),
            "histogram_quantile(0.99, sum by (le, service_name, nemo_run_id) \
             (rate(gen_ai_server_request_duration_seconds_bucket[5m])))"
        );
        let tokens = file
            .recording
            .iter()
            .find(|r| {
                r.record
                    .starts_with("nemo_lens:gen_ai_client_token_usage:p50")
            })
            .unwrap();
        assert!(tokens
            .expr
            .contains("by (le, service_name, nemo_run_id, gen_ai_token_type)"));

        let names: Vec<&str> = file.alerts.iter().map(|a| a.alert.as_str()).collect();
        assert!(names.contains(&"NemoLensRunStoppedReporting"), "{names:?}");
        assert!(
            names.contains(&"NemoLensGenAiServerRequestDurationP99High"),
            "{names:?}"
        );
        assert!(
            names.contains(&"NemoLensGenAiServerRequestDurationErrorRatioHigh"),
            "{names:?}"
        );
        let latency = file
            .alerts
            .iter()
            .find(|a| a.alert.ends_with("P99High"))
            .unwrap();
        assert!(latency.expr().ends_with("> 10"), "{}", latency.expr());
    }

    #[test]
    fn alerts_follow_the_instruments_the_sets_have() {
        let rl = &builtin_sets()[4..5];
        assert_eq!(rl[0].title, "RL training");
        let file = rules(rl, &AlertPolicy::default());
        let names: Vec<&str> = file.alerts.iter().map(|a| a.alert.as_str()).collect();
        assert_eq!(names, ["NemoLensRunStoppedReporting"]);
        assert!(rules(&[], &AlertPolicy::default())
            .to_yaml()
            .contains("rules: []"));
    }

    #[test]
    fn yaml_quotes_every_expression() {
        let yaml = rules(&builtin_sets(), &AlertPolicy::default()).to_yaml();
        assert!(yaml.contains(r#"expr: "(sum by (service_name, nemo_run_id) (rate(gen_ai_server_request_duration_seconds_count{error_type!=\"\"}[5m])) or 0 * "#), "{yaml}");
        assert!(yaml.contains("      - alert: \"NemoLensRunStoppedReporting\"\n        expr: \"max_over_time(group by (service_name, nemo_run_id) ({__name__=~\\\""));
    }
}
