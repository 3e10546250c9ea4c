//! Why a web configuration cannot be used.

use std::path::PathBuf;

use nemo_lens_core::config::ConfigError;

/// Why the web configuration file cannot be used: the file, or a key of it.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum WebConfigError {
    /// The file cannot be read.
    #[error("cannot read the Prometheus web configuration {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A key or value exporter-toolkit would refuse: the error names the key
    /// (as `tls_server_config.min_version in /etc/web.yml`).
    #[error(transparent)]
    Invalid(#[from] ConfigError),
    /// A certificate, key or CA the configuration names does not load.
    #[error("the Prometheus web configuration {}: {what} {source_name} does not load: {reason}", config.display())]
    Certificate {
        /// The configuration file.
        config: PathBuf,
        /// `cert_file`, `key_file`, `client_ca_file` or their inline forms.
        what: &'static str,
        /// The file it was read from, or `(inline)`.
        source_name: String,
        /// Why.
        reason: String,
    },
}

nemo_lens_core::__debug_as_sentence!(WebConfigError);

/// A `ConfigError` for `key` of the file at `path`.
pub(super) fn invalid(
    path: &std::path::Path,
    key: &str,
    value: impl Into<String>,
    expected: impl Into<String>,
) -> WebConfigError {
    ConfigError::new(format!("{key} in {}", path.display()), value, expected).into()
}

/// The parser's message as a `ConfigError` naming the key: serde says
/// `tls_server_config: unknown field `cert_filse`, expected one of ... at
/// line 2 column 3`.
pub(super) fn from_parser(path: &std::path::Path, message: &str) -> WebConfigError {
    let (key, detail) = match message.split_once(": ") {
        Some((key, detail)) if !key.contains(' ') => (key.to_owned(), detail),
        _ => ("the file".to_owned(), message),
    };
    if let Some(rest) = detail.strip_prefix("unknown field `")
        && let Some((field, expected)) = rest.split_once("`, expected ")
    {
        let key = if key == "the file" {
            "a top-level key".to_owned()
        } else {
            format!("a key of {key}")
        };
        return invalid(path, &key, field, expected.replace('`', ""));
    }
    if let Some(rest) = detail.strip_prefix("invalid type: ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return invalid(path, &key, found, expected);
    }
    invalid(path, &key, "", detail)
}
