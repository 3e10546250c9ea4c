//! A light check that a file holds PEM blocks of the expected kind, so a
//! wrong path or file fails when the configuration is read; the TLS
//! library parses the contents when the exporter is built.

use super::env::ConfigError;

/// Labels of certificate blocks.
pub(super) const CERTIFICATE: &[&str] = &["CERTIFICATE"];
/// Labels of private key blocks (PKCS#8, PKCS#1, SEC1).
pub(super) const PRIVATE_KEY: &[&str] = &["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"];

/// Checks that `path` (the value of `variable`) is readable and holds at
/// least one well-formed PEM block labelled with one of `labels`.
pub(super) fn check_file(variable: &str, path: &str, labels: &[&str]) -> Result<(), ConfigError> {
    let text = std::fs::read(path)
        .map_err(|e| ConfigError::new(variable, path, format!("a readable PEM file ({e})")))?;
    let text = String::from_utf8_lossy(&text);
    if blocks(&text).any(|(label, body)| labels.contains(&label) && is_base64(body)) {
        Ok(())
    } else {
        Err(ConfigError::new(
            variable,
            path,
            format!("a PEM file with a \"-----BEGIN {}-----\" block", labels[0]),
        ))
    }
}

/// `(label, body)` of each `-----BEGIN label-----` ... `-----END label-----`.
fn blocks(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        let start = rest.find("-----BEGIN ")? + "-----BEGIN ".len();
        rest = &rest[start..];
        let label_end = rest.find("-----")?;
        let label = &rest[..label_end];
        rest = &rest[label_end + 5..];
        let end_marker = format!("-----END {label}-----");
        if let Some(end) = rest.find(&end_marker) {
            let body = &rest[..end];
            rest = &rest[end + end_marker.len()..];
            return Some((label, body));
        }
    })
}

fn is_base64(body: &str) -> bool {
    let chars: Vec<u8> = body.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    !chars.is_empty()
        && chars.len().is_multiple_of(4)
        && chars
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_labelled_base64_blocks() {
        let text = "junk\n-----BEGIN CERTIFICATE-----\nQUJD\nREVG\n-----END CERTIFICATE-----\n";
        assert_eq!(
            blocks(text).collect::<Vec<_>>(),
            [("CERTIFICATE", "\nQUJD\nREVG\n")]
        );
        assert!(is_base64("\nQUJD\nREVG\n"));
        assert!(!is_base64("QUJ"));
        assert!(!is_base64("QU*D"));
        assert_eq!(blocks("-----BEGIN X-----\nQUJD\n").count(), 0);
    }
}
