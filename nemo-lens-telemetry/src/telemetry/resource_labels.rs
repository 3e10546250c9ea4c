//! Checking `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS` against the resource setup
//! builds: the selection itself is parsed in `nemo-lens-core`, where the
//! exposition reads it.

use super::env::ConfigError;
use nemo_lens_core::config::PrometheusResourceLabels;

/// Refuses a listed key that `resource` lacks and that nemo-lens never
/// sets, naming `variable` and the key, and the OpenTelemetry spelling
/// when the key is one's Prometheus label name (`service_name` for
/// `service.name`): a silently skipped key would drop the label from
/// every series a dashboard selects on.
pub(crate) fn check_keys(
    labels: &PrometheusResourceLabels,
    variable: &str,
    resource: &opentelemetry_sdk::Resource,
) -> Result<(), ConfigError> {
    let PrometheusResourceLabels::Keys(keys) = labels else {
        return Ok(());
    };
    let on_resource = |key: &str| resource.get(&opentelemetry::Key::from(key.to_owned()));
    for key in keys {
        if on_resource(key).is_some() || super::resource::may_set(key) {
            continue;
        }
        let spelled = resource
            .iter()
            .map(|(known, _)| known.as_str().to_owned())
            .chain(super::resource::MAY_SET.map(str::to_owned))
            .find(|known| nemo_lens_naming::label_name(known) == *key);
        let expected = match spelled {
            Some(known) => format!(
                "a resource attribute key as OpenTelemetry spells it: `{known}` \
                 (`{key}` is its Prometheus label name)"
            ),
            None => "a key of this process's resource (OTEL_RESOURCE_ATTRIBUTES, \
                     SetupOptions::resource_attribute, or one nemo-lens sets such as \
                     service.name or nemo.run.id), all, or none"
                .to_owned(),
        };
        return Err(ConfigError::new(variable, key, expected));
    }
    Ok(())
}
