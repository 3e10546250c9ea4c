//! The file checked as exporter-toolkit checks it: names resolved, values
//! known, paths joined to the file's directory. Certificates are loaded by
//! [`tls`](super::tls), which this only describes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{from_parser, invalid, WebConfigError};
use super::file::{self, Interval};

/// What a client must present (`client_auth_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientAuth {
    NoClientCert,
    RequestClientCert,
    RequireAnyClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

/// PEM read from a file (named, for errors) or given inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pem {
    File(PathBuf),
    Inline(String),
}

/// `tls_server_config`, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TlsSettings {
    pub cert: Pem,
    pub key: Pem,
    pub client_ca: Option<Pem>,
    pub client_auth: ClientAuth,
    /// Go's names, as given; `None`: every suite.
    pub cipher_suites: Option<Vec<String>>,
    pub curves: Option<Vec<String>>,
    /// TLS 1.2 allowed (1.3 always is unless `max_version: TLS12`).
    pub tls12: bool,
    pub tls13: bool,
    pub prefer_server_cipher_suites: bool,
    pub client_allowed_sans: Option<Vec<String>>,
}

/// The whole file, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub tls: Option<TlsSettings>,
    pub headers: Vec<(String, String)>,
    pub users: BTreeMap<String, String>,
    /// One request per interval, with this burst.
    pub rate_limit: Option<(Duration, u32)>,
}

/// The headers exporter-toolkit lets a configuration set, with the values
/// it allows (`None`: any).
const HEADERS: [(&str, Option<&[&str]>); 5] = [
    ("Strict-Transport-Security", None),
    ("X-Content-Type-Options", Some(&["nosniff"])),
    ("X-Frame-Options", Some(&["deny", "sameorigin"])),
    ("X-XSS-Protection", None),
    ("Content-Security-Policy", None),
];

/// Go's `tls.CipherSuites()`: the names exporter-toolkit accepts.
pub(crate) const GO_CIPHER_SUITES: [&str; 17] = [
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// exporter-toolkit's curve names.
pub(crate) const GO_CURVES: [&str; 4] = ["CurveP256", "CurveP384", "CurveP521", "X25519"];

const VERSIONS: [&str; 4] = ["TLS10", "TLS11", "TLS12", "TLS13"];

/// Reads and checks the file at `path`.
pub(crate) fn read(path: &Path) -> Result<Settings, WebConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| WebConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    check(path, &text)
}

/// Checks `text`, the content of the file at `path`.
pub(crate) fn check(path: &Path, text: &str) -> Result<Settings, WebConfigError> {
    let parsed = file::parse(text).map_err(|message| from_parser(path, &message))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let http = parsed.http_server_config.unwrap_or_default();
    let headers = check_headers(path, http.headers.unwrap_or_default())?;
    let users = parsed.basic_auth_users.unwrap_or_default();
    for (user, hash) in &users {
        if bcrypt_cost(hash).is_none() {
            return Err(invalid(
                path,
                &format!("basic_auth_users.{user}"),
                "<hidden>",
                "a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31), as `htpasswd -nBC 10 \"\" | tr -d ':\\n'` writes",
            ));
        }
    }
    let rate_limit = match parsed.rate_limit {
        Some(limit) => check_rate_limit(path, limit)?,
        None => None,
    };
    let tls = match parsed.tls_server_config {
        Some(tls) if tls.is_enabled() => {
            Some(check_tls(path, dir, tls, http.http2.unwrap_or(true))?)
        }
        _ => None,
    };
    Ok(Settings {
        tls,
        headers,
        users,
        rate_limit,
    })
}

/// The cost of a bcrypt hash, if it is one (Go's `bcrypt.Cost`).
pub(crate) fn bcrypt_cost(hash: &str) -> Option<u32> {
    let rest = ["$2a$", "$2b$", "$2y$", "$2x$"]
        .iter()
        .find_map(|prefix| hash.strip_prefix(prefix))?;
    let (cost, salted) = rest.split_once('$')?;
    let cost: u32 = cost.parse().ok().filter(|c| (4..=31).contains(c))?;
    (salted.len() == 53).then_some(cost)
}

fn check_headers(
    path: &Path,
    headers: BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, WebConfigError> {
    let mut checked = Vec::new();
    for (name, value) in headers {
        let Some((_, allowed)) = HEADERS.iter().find(|(known, _)| *known == name) else {
            return Err(invalid(
                path,
                "http_server_config.headers",
                name,
                format!(
                    "one of {}",
                    HEADERS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if let Some(allowed) = allowed
            && !allowed.contains(&value.as_str())
        {
            return Err(invalid(
                path,
                &format!("http_server_config.headers.{name}"),
                value,
                format!("one of {}", allowed.join(", ")),
            ));
        }
        checked.push((name, value));
    }
    Ok(checked)
}

fn check_rate_limit(
    path: &Path,
    limit: file::RateLimit,
) -> Result<Option<(Duration, u32)>, WebConfigError> {
    let interval = match limit.interval {
        None => Duration::ZERO,
        Some(Interval::Nanos(n)) => Duration::from_nanos(u64::try_from(n).unwrap_or(0)),
        Some(Interval::Text(text)) => go_duration(&text).ok_or_else(|| {
            invalid(
                path,
                "rate_limit.interval",
                text.clone(),
                "a duration such as 1s, 500ms or 1m30s",
            )
        })?,
    };
    if interval.is_zero() {
        return Ok(None);
    }
    let burst = u32::try_from(limit.burst.unwrap_or(0)).unwrap_or(0);
    Ok(Some((interval, burst)))
}

/// Go's `time.ParseDuration` for the units a rate limit uses.
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (number, after) = rest.split_at(digits);
        let value: f64 = number.parse().ok()?;
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let seconds = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += Duration::from_secs_f64(value * seconds);
        rest = next;
    }
    Some(total)
}

fn check_tls(
    path: &Path,
    dir: &Path,
    tls: file::TlsServerConfig,
    http2: bool,
) -> Result<TlsSettings, WebConfigError> {
    let joined = |p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_owned()
        } else {
            dir.join(p)
        }
    };
    let pem = |file: &Option<String>, inline: &Option<String>| -> Option<Pem> {
        match (file.as_deref(), inline.as_deref()) {
            (Some(f), _) if !f.is_empty() => Some(Pem::File(joined(f))),
            (_, Some(text)) if !text.is_empty() => Some(Pem::Inline(text.to_owned())),
            _ => None,
        }
    };
    let cert = pem(&tls.cert_file, &tls.cert).ok_or_else(|| {
        invalid(
            path,
            "tls_server_config",
            "",
            "one of cert or cert_file (TLS is on: a TLS key is set)",
        )
    })?;
    let key = pem(&tls.key_file, &tls.key).ok_or_else(|| {
        invalid(
            path,
            "tls_server_config",
            "",
            "one of key or key_file (TLS is on: a TLS key is set)",
        )
    })?;
    let client_ca = pem(&tls.client_ca_file, &tls.client_ca);
    let client_auth = match tls.client_auth_type.as_deref().unwrap_or("") {
        "" | "NoClientCert" => ClientAuth::NoClientCert,
        "RequestClientCert" => ClientAuth::RequestClientCert,
        // The second name is kept by exporter-toolkit for old files.
        "RequireAnyClientCert" | "RequireClientCert" => ClientAuth::RequireAnyClientCert,
        "VerifyClientCertIfGiven" => ClientAuth::VerifyClientCertIfGiven,
        "RequireAndVerifyClientCert" => ClientAuth::RequireAndVerifyClientCert,
        other => {
            return Err(invalid(
                path,
                "tls_server_config.client_auth_type",
                other,
                "one of NoClientCert, RequestClientCert, RequireAnyClientCert, \
                 VerifyClientCertIfGiven, RequireAndVerifyClientCert",
            ))
        }
    };
    if let Some(suites) = &tls.cipher_suites {
        for suite in suites {
            if !GO_CIPHER_SUITES.contains(&suite.as_str()) {
                return Err(invalid(
                    path,
                    "tls_server_config.cipher_suites",
                    suite,
                    format!("Go's cipher suite names: {}", GO_CIPHER_SUITES.join(", ")),
                ));
            }
        }
        // Go's HTTP/2 server refuses a suite list without one it requires.
        if http2
            && !suites.is_empty()
            && !suites.iter().any(|s| {
                s == "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
                    || s == "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
            })
        {
            return Err(invalid(
                path,
                "tls_server_config.cipher_suites",
                suites.join(","),
                "a list with TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or \
                 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 while http_server_config.http2 is on, \
                 as exporter-toolkit requires",
            ));
        }
    }
    if let Some(curves) = &tls.curve_preferences {
        for curve in curves {
            if !GO_CURVES.contains(&curve.as_str()) {
                return Err(invalid(
                    path,
                    "tls_server_config.curve_preferences",
                    curve,
                    format!("one of {}", GO_CURVES.join(", ")),
                ));
            }
        }
    }
    let version = |key: &str,
                   value: &Option<String>,
                   default: usize|
     -> Result<usize, WebConfigError> {
        match value.as_deref() {
            None => Ok(default),
            Some(v) => VERSIONS
                .iter()
                .position(|known| *known == v)
                .ok_or_else(|| invalid(path, key, v, format!("one of {}", VERSIONS.join(", ")))),
        }
    };
    let min = version("tls_server_config.min_version", &tls.min_version, 2)?;
    let max = version("tls_server_config.max_version", &tls.max_version, 3)?;
    // rustls speaks TLS 1.2 and 1.3 only: an older minimum means 1.2.
    let (tls12, tls13) = (min <= 2 && max >= 2, max >= 3);
    if !tls12 && !tls13 || min > max {
        return Err(invalid(
            path,
            "tls_server_config.max_version",
            VERSIONS[max],
            "TLS12 or TLS13, not below min_version (this endpoint speaks TLS 1.2 and 1.3)",
        ));
    }
    Ok(TlsSettings {
        cert,
        key,
        client_ca,
        client_auth,
        cipher_suites: tls.cipher_suites.filter(|s| !s.is_empty()),
        curves: tls.curve_preferences.filter(|c| !c.is_empty()),
        tls12,
        tls13,
        prefer_server_cipher_suites: tls.prefer_server_cipher_suites.unwrap_or(true),
        client_allowed_sans: tls.client_allowed_sans,
    })
}

impl Settings {
    /// The files whose change means the configuration must be read again:
    /// certificates are rotated in place.
    pub(crate) fn files(&self) -> Vec<PathBuf> {
        let Some(tls) = &self.tls else {
            return Vec::new();
        };
        [Some(&tls.cert), Some(&tls.key), tls.client_ca.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|pem| match pem {
                Pem::File(path) => Some(path.clone()),
                Pem::Inline(_) => None,
            })
            .collect()
    }
}
