//! The `OTEL_EXPORTER_OTLP_*` variables, each validated when the
//! configuration is read, so a bad value fails at start with the variable
//! named instead of failing every export later. Header values are never
//! shown in errors: they usually hold tokens.

use std::path::PathBuf;
use std::time::Duration;

use opentelemetry_sdk::metrics::Temporality;

use super::env::{parse_millis, parse_protocol, ConfigError, NamedFile, Reader};
use super::pem;
use nemo_lens_core::OtlpProtocol;

/// The OTLP exporter's part of the configuration (`NemoLensConfig`'s
/// `otlp_*` fields), as its variables set it.
#[derive(Debug)]
pub(super) struct Otlp {
    pub protocol: OtlpProtocol,
    pub endpoint: Option<String>,
    pub metrics_endpoint: Option<String>,
    pub headers: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub temporality: Temporality,
    pub certificate: Option<NamedFile>,
    pub client_certificate: Option<NamedFile>,
    pub client_key: Option<NamedFile>,
}

impl Default for Otlp {
    /// What an unset variable leaves: the OpenTelemetry defaults.
    fn default() -> Self {
        Otlp {
            protocol: OtlpProtocol::Grpc,
            endpoint: None,
            metrics_endpoint: None,
            headers: Vec::new(),
            timeout: None,
            temporality: Temporality::Cumulative,
            certificate: None,
            client_certificate: None,
            client_key: None,
        }
    }
}

/// Reads every OTLP variable.
pub(super) fn read(reader: &Reader<'_>) -> Result<Otlp, ConfigError> {
    let mut config = Otlp::default();
    // Set, it would change nothing: said rather than ignored.
    if let Some((var, _)) = reader.plain(&[
        "OTEL_EXPORTER_OTLP_METRICS_INSECURE",
        "OTEL_EXPORTER_OTLP_INSECURE",
    ]) {
        nemo_lens_core::__internal::warnings::emit(
            nemo_lens_core::__internal::warnings::Warning::Setting,
            || {
                tracing::warn!(
                "{var} has no effect: the endpoint's scheme decides TLS (http:// or https://), \
                 and an endpoint without one is refused"
            );
            },
        );
    }
    if let Some((var, v)) = reader.plain(&[
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ]) {
        config.protocol = parse_protocol(&var, &v)?;
    }
    // Both are checked, even when the metrics one wins, so a typo in
    // either is caught.
    if let Some((var, v)) = reader.plain(&["OTEL_EXPORTER_OTLP_ENDPOINT"]) {
        check_endpoint(&var, &v)?;
        config.endpoint = Some(v);
    }
    if let Some((var, v)) = reader.plain(&["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]) {
        check_endpoint(&var, &v)?;
        config.metrics_endpoint = Some(v);
    }
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        if let Some((var, v)) = reader.plain(&[var]) {
            // The metrics variable, read last, replaces the general one.
            config.headers = parse_headers(&var, &v, config.protocol)?;
        }
    }
    if let Some((var, v)) = reader.plain(&[
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]) {
        config.timeout = Some(parse_millis(&var, &v)?);
    }
    if let Some((var, v)) = reader.plain(&["OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"]) {
        config.temporality = match v.to_ascii_lowercase().as_str() {
            "cumulative" => Temporality::Cumulative,
            "delta" => Temporality::Delta,
            "lowmemory" => Temporality::LowMemory,
            _ => return Err(ConfigError::new(var, v, "cumulative, delta or lowmemory")),
        };
    }
    if let Some((var, v)) = reader.plain(&[
        "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
        "OTEL_EXPORTER_OTLP_COMPRESSION",
    ]) {
        // Only `none`: with gzip compiled in, opentelemetry-otlp cannot be
        // told "no compression" and would take it from the process
        // environment instead of from this configuration.
        if !v.eq_ignore_ascii_case("none") {
            return Err(ConfigError::new(
                var,
                v,
                "none (this build does not compress OTLP exports)",
            ));
        }
    }
    config.certificate = pem_file(
        reader,
        &[
            "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
        ],
        pem::CERTIFICATE,
    )?;
    config.client_certificate = pem_file(
        reader,
        &[
            "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
        ],
        pem::CERTIFICATE,
    )?;
    config.client_key = pem_file(
        reader,
        &[
            "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
            "OTEL_EXPORTER_OTLP_CLIENT_KEY",
        ],
        pem::PRIVATE_KEY,
    )?;
    match (&config.client_certificate, &config.client_key) {
        (Some(file), None) => Err(ConfigError::new(
            &file.variable,
            file.path.display().to_string(),
            "a client certificate given together with OTEL_EXPORTER_OTLP_CLIENT_KEY",
        )),
        (None, Some(file)) => Err(ConfigError::new(
            &file.variable,
            file.path.display().to_string(),
            "a client key given together with OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
        )),
        _ => Ok(config),
    }
}

const ENDPOINT_EXPECTED: &str =
    "an http:// or https:// URL with a host, such as http://collector:4317";

/// An `http://` or `https://` URL with a host.
pub(crate) fn check_endpoint(variable: &str, value: &str) -> Result<(), ConfigError> {
    let error = || ConfigError::new(variable, value, ENDPOINT_EXPECTED);
    let uri: http::Uri = value.parse().map_err(|_| error())?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(error());
    }
    // `Uri` keeps a port it cannot read as a number as "no port".
    let authority = uri.authority().map_or("", |a| a.as_str());
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    if let Some((_, port)) = authority.rsplit_once(':').filter(|(_, p)| !p.contains(']'))
        && port.parse::<u16>().is_err()
    {
        return Err(error());
    }
    match uri.host() {
        Some(host) if !host.is_empty() && host != "[]" => Ok(()),
        _ => Err(error()),
    }
}

fn pem_file(
    reader: &Reader<'_>,
    variables: &[&str],
    labels: &[&str],
) -> Result<Option<NamedFile>, ConfigError> {
    let Some((variable, value)) = reader.plain(variables) else {
        return Ok(None);
    };
    pem::check_file(&variable, &value, labels)?;
    Ok(Some(NamedFile {
        variable,
        path: PathBuf::from(value),
    }))
}

/// RFC 9110 `tchar`: what a header name is made of.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The list with every value replaced, for error messages.
fn redacted(value: &str) -> String {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once('=') {
            Some((name, _)) if is_token(name.trim()) => format!("{}=<redacted>", name.trim()),
            _ => "<redacted>".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `key=value,...` headers, percent-decoded, with names that are HTTP
/// tokens and values of printable ASCII, as both transports require.
pub(crate) fn parse_headers(
    variable: &str,
    value: &str,
    protocol: OtlpProtocol,
) -> Result<Vec<(String, String)>, ConfigError> {
    let error = |expected: &str| ConfigError::new(variable, redacted(value), expected);
    let pairs = super::env::parse_key_values(variable, value)
        .map_err(|e| error(&format!("{} (values are not shown)", e.expected)))?;
    for (name, header_value) in &pairs {
        if !is_token(name) {
            return Err(error(
                "header names made of letters, digits and !#$%&'*+-.^_`|~ (values are not shown)",
            ));
        }
        if !header_value
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            return Err(error(&format!(
                "printable ASCII header values; the value of {name} is not (values are not shown)"
            )));
        }
        if protocol == OtlpProtocol::Grpc && name.to_ascii_lowercase().ends_with("-bin") {
            return Err(error(&format!(
                "gRPC metadata names that do not end in -bin (binary metadata is not supported): {name}"
            )));
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{EnvLookup, NemoLensConfig};

    /// A job exporting over OTLP: the only kind that reads these variables.
    fn config(pairs: &[(&str, &str)]) -> Result<NemoLensConfig, ConfigError> {
        let enabled = [("NEMO_LENS_ENABLED", "1")];
        NemoLensConfig::from_lookup(EnvLookup::from_pairs(enabled.iter().chain(pairs).copied()))
    }

    #[test]
    fn endpoints_must_be_http_urls_with_a_host_and_errors_name_the_variable() {
        for var in [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        ] {
            for bad in [
                "not-a-url",
                "ftp://collector:4317",
                "collector:4317",
                "http://",
                "http://:4317",
                "http://host:99999",
                "https://exa mple.com",
            ] {
                let err = config(&[(var, bad)]).unwrap_err();
                assert_eq!((err.variable.as_str(), err.value.as_str()), (var, bad));
                let message = err.to_string();
                assert!(message.contains(var) && message.contains(bad), "{message}");
                assert!(message.contains("http:// or https:// URL"), "{message}");
            }
            for good in [
                "http://127.0.0.1:4317",
                "https://collector.example.com",
                "http://[::1]:4318/v1/metrics",
                "HTTP://Collector:4317",
            ] {
                config(&[(var, good)]).unwrap();
            }
        }
    }

    #[test]
    fn header_errors_never_show_values_and_name_the_variable() {
        let secret = "Bearer%20s3cr3t-token";
        for (var, value, protocol, expected) in [
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization={secret},bad name=x"),
                "grpc",
                "header names",
            ),
            (
                "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
                format!("authorization={secret},x=%0A"),
                "http/protobuf",
                "printable ASCII",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization {secret}"),
                "http/protobuf",
                "key=value",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization={secret},trace-bin=abc"),
                "grpc",
                "-bin",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                format!("authorization={secret},x=%zz"),
                "grpc",
                "percent-encoded",
            ),
        ] {
            let err = config(&[
                (var, value.as_str()),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            ])
            .unwrap_err();
            let message = err.to_string();
            assert_eq!(err.variable, var);
            assert!(!message.contains("s3cr3t"), "{message}");
            assert!(!err.value.contains("s3cr3t"), "{err:?}");
            assert!(message.contains(expected), "{message}");
        }
        let err = config(&[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20tok,x=%0A",
        )])
        .unwrap_err();
        assert_eq!(err.value, "authorization=<redacted>,x=<redacted>");
    }

    #[test]
    fn metrics_headers_replace_the_general_ones() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=2"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "c=3"),
        ])
        .unwrap();
        assert_eq!(c.otlp_headers, vec![("c".to_owned(), "3".to_owned())]);
    }

    #[test]
    fn timeouts_temporality_and_compression_are_read_and_checked() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1500"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
        ])
        .unwrap();
        assert_eq!(c.otlp_timeout, Some(std::time::Duration::from_millis(1500)));
        assert_eq!(c.otlp_temporality, Temporality::Delta);
        for (var, value, expected) in [
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "0", "positive"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1s", "milliseconds"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
                "sometimes",
                "cumulative, delta or lowmemory",
            ),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "none"),
            ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "zstd", "none"),
        ] {
            let err = config(&[(var, value)]).unwrap_err();
            assert_eq!((err.variable.as_str(), err.value.as_str()), (var, value));
            assert!(err.to_string().contains(expected), "{err}");
        }
    }

    #[test]
    fn certificate_files_must_exist_hold_pem_and_come_in_pairs() {
        let dir = std::env::temp_dir().join(format!("nemo-lens-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = dir.join("ca.pem");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let key = dir.join("key.pem");
        std::fs::write(
            &key,
            "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "hello").unwrap();
        let (cert, key, junk) = (
            cert.to_str().unwrap(),
            key.to_str().unwrap(),
            junk.to_str().unwrap(),
        );

        let c = config(&[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", cert),
            ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", cert),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key),
        ])
        .unwrap();
        assert_eq!(
            c.otlp_certificate.unwrap().variable,
            "OTEL_EXPORTER_OTLP_CERTIFICATE"
        );
        assert_eq!(
            c.otlp_client_certificate.unwrap().variable,
            "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE"
        );

        for (pairs, var, expected) in [
            (
                vec![("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem")],
                "OTEL_EXPORTER_OTLP_CERTIFICATE",
                "readable",
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", junk)],
                "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
                "CERTIFICATE",
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_CLIENT_KEY", cert)],
                "OTEL_EXPORTER_OTLP_CLIENT_KEY",
                "PRIVATE KEY",
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", cert)],
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
                "together with OTEL_EXPORTER_OTLP_CLIENT_KEY",
            ),
        ] {
            let err = config(&pairs).unwrap_err();
            assert_eq!(err.variable, var, "{err}");
            assert!(err.to_string().contains(expected), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
