//! Which resource attributes the Prometheus endpoint copies onto every
//! series as labels (`NEMO_LENS_PROMETHEUS_RESOURCE_LABELS`).

use super::env::ConfigError;

/// Resource attributes put on every series of the Prometheus endpoint, as
/// the Lens stack's collector does with `resource_to_telemetry_conversion`.
/// `target_info` carries the whole resource whatever is chosen here.
///
/// The default, [`PrometheusResourceLabels::default_keys`], is what NeMo
/// Lens's dashboards select on (`{service_name=~"$service",
/// nemo_run_id=~"$run_id"}`) plus the rank identity, so they work out of the
/// box. The labels are constant for a process, so they add no series within
/// a run (a new run or rank is a new series either way, through
/// `nemo.run.id`); they add bytes to every sample line of every scrape and
/// to the index. [`All`](Self::All) copies the whole resource (about 15 to
/// 30 attributes: `telemetry.sdk.*`, host, process, Slurm, Kubernetes). One
/// scrape of the demo (153 samples) is 25.0 kB with `none`, 40.5 kB with the
/// default and 66.8 kB with `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrometheusResourceLabels {
    /// Every resource attribute (`all`).
    All,
    /// None: the resource is only on `target_info` (`none`), as with a
    /// plain `opentelemetry-prometheus` exporter.
    None,
    /// The listed attribute keys, as written in the resource
    /// (`service.name`, not `service_name`). Setup refuses a key that is
    /// neither on the resource nor one nemo-lens sets in some environments
    /// (`slurm.job.id`, `k8s.pod.name`, ...), which are skipped where absent.
    Keys(Vec<String>),
}

/// The keys of the default selection.
pub const DEFAULT_RESOURCE_LABEL_KEYS: [&str; 4] = [
    "service.name",
    "service.instance.id",
    "nemo.run.id",
    "dl.rank",
];

const EXPECTED: &str = "all, none, or a comma-separated list of resource attribute keys such \
                        as service.name,nemo.run.id";

impl Default for PrometheusResourceLabels {
    fn default() -> Self {
        Self::default_keys()
    }
}

impl PrometheusResourceLabels {
    /// `service.name`, `service.instance.id`, `nemo.run.id` and `dl.rank`.
    pub fn default_keys() -> Self {
        Self::keys(DEFAULT_RESOURCE_LABEL_KEYS)
    }

    /// A list of resource attribute keys.
    pub fn keys<K: Into<String>>(keys: impl IntoIterator<Item = K>) -> Self {
        PrometheusResourceLabels::Keys(keys.into_iter().map(Into::into).collect())
    }

    /// Parses `all`, `none` (any case) or `key1,key2`; the error names
    /// `variable`.
    pub fn parse(variable: &str, value: &str) -> Result<Self, ConfigError> {
        let error = || ConfigError::new(variable, value, EXPECTED);
        match value.trim().to_ascii_lowercase().as_str() {
            "all" => return Ok(PrometheusResourceLabels::All),
            "none" => return Ok(PrometheusResourceLabels::None),
            _ => {}
        }
        let mut keys = Vec::new();
        for key in value.split(',').map(str::trim) {
            let valid = !key.is_empty()
                && !key.eq_ignore_ascii_case("all")
                && !key.eq_ignore_ascii_case("none")
                && key
                    .chars()
                    .all(|c| c.is_ascii_graphic() && !matches!(c, '=' | '"' | '\''));
            if !valid {
                return Err(error());
            }
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_owned());
            }
        }
        Ok(PrometheusResourceLabels::Keys(keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VAR: &str = "NEMO_LENS_PROMETHEUS_RESOURCE_LABELS";

    #[test]
    fn all_none_and_lists() {
        let parse = |v| PrometheusResourceLabels::parse(VAR, v);
        assert_eq!(parse("all"), Ok(PrometheusResourceLabels::All));
        assert_eq!(parse(" NONE "), Ok(PrometheusResourceLabels::None));
        assert_eq!(
            parse("service.name, nemo.run.id,service.name"),
            Ok(PrometheusResourceLabels::keys([
                "service.name",
                "nemo.run.id"
            ]))
        );
        assert_eq!(
            PrometheusResourceLabels::default(),
            PrometheusResourceLabels::keys(DEFAULT_RESOURCE_LABEL_KEYS)
        );
    }

    #[test]
    fn bad_lists_name_the_variable_and_the_value() {
        for bad in [
            "a,,b",
            "all,service.name",
            "service.name=x",
            "has space",
            "k,none",
        ] {
            let err = PrometheusResourceLabels::parse(VAR, bad).unwrap_err();
            assert_eq!((err.variable.as_str(), err.value.as_str()), (VAR, bad));
            assert!(err.to_string().contains("all, none, or"), "{err}");
        }
    }
}
