//! The web configuration file as exporter-toolkit reads it: the same keys,
//! unknown ones refused (its `UnmarshalStrict`), and its defaults.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The whole file. A key present with no value (`basic_auth_users:`) is
/// its default, as in Go's YAML.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    #[serde(default)]
    pub tls_server_config: Option<TlsServerConfig>,
    #[serde(default)]
    pub http_server_config: Option<HttpServerConfig>,
    #[serde(default)]
    pub rate_limit: Option<RateLimit>,
    #[serde(default)]
    pub basic_auth_users: Option<BTreeMap<String, String>>,
}

/// `tls_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct TlsServerConfig {
    /// Inline PEM certificate (chain); `cert_file` wins.
    pub cert: Option<String>,
    /// Inline PEM key; `key_file` wins.
    pub key: Option<String>,
    /// Inline PEM client CA; `client_ca_file` wins.
    pub client_ca: Option<String>,
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
    pub client_auth_type: Option<String>,
    pub client_ca_file: Option<String>,
    pub cipher_suites: Option<Vec<String>>,
    pub curve_preferences: Option<Vec<String>>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    pub prefer_server_cipher_suites: Option<bool>,
    pub client_allowed_sans: Option<Vec<String>>,
}

/// `http_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct HttpServerConfig {
    pub http2: Option<bool>,
    pub headers: Option<BTreeMap<String, String>>,
}

/// `rate_limit`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(super) struct RateLimit {
    pub burst: Option<i64>,
    pub interval: Option<Interval>,
}

/// A Go `time.Duration` in YAML: a duration string (`1s`, `250ms`) or an
/// integer count of nanoseconds.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Interval {
    Nanos(i64),
    Text(String),
}

impl TlsServerConfig {
    /// exporter-toolkit's `IsEnabled`: any TLS key set turns TLS on.
    pub fn is_enabled(&self) -> bool {
        [
            &self.cert_file,
            &self.cert,
            &self.key_file,
            &self.key,
            &self.client_ca_file,
            &self.client_ca,
            &self.client_auth_type,
        ]
        .iter()
        .any(|value| value.as_deref().is_some_and(|v| !v.is_empty()))
    }
}

/// Parses `text`; an empty file is the default configuration.
pub(super) fn parse(text: &str) -> Result<File, String> {
    if text.trim().is_empty() {
        return Ok(File::default());
    }
    yaml_serde::from_str(text).map_err(|e| e.to_string())
}
