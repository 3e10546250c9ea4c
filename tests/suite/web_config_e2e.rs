//! Debian's Prometheus 2.42 scraping the demo's endpoint under a web
//! configuration file: `scheme: https` with `tls_config.ca_file` and
//! `basic_auth`, a wrong password, plain HTTP, client certificates
//! (required, signed by the CA or not), and the file changed under the
//! running endpoint (a password rotated, client certificates required).
//! Server certificates of both kinds users make: a leaf under a CA (rcgen)
//! and `openssl req -x509`.
//!
//! Ignored by default: `scripts/e2e.sh` builds the demo with every feature
//! and sets `NEMO_LENS_DEMO_BIN` and `PROMETHEUS_BIN`. Every server binds
//! 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::servers::{self, first_line, free_port, start_prometheus, Reaped};
use crate::support::tls::{openssl_self_signed, ScratchDir, TestPki};

/// The demo serving Prometheus on `port` under the web configuration `web`.
fn demo(port: u16, web: &Path) -> Reaped {
    let bin = std::env::var("NEMO_LENS_DEMO_BIN").expect("NEMO_LENS_DEMO_BIN: the built demo");
    let mut demo = Reaped(
        Command::new(bin)
            .args(["--seconds", "120", "--step-ms", "100"])
            .env("NEMO_LENS_EXPORTER", "prometheus")
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", port.to_string())
            .env("NEMO_LENS_PROMETHEUS_WEB_CONFIG", web)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo"),
    );
    let first = first_line(&mut demo.0, Duration::from_secs(30));
    assert_eq!(
        first.trim(),
        format!("serving Prometheus metrics at https://127.0.0.1:{port}/metrics")
    );
    demo
}

fn write(path: &Path, text: &str) {
    let aside = path.with_extension("tmp");
    std::fs::write(&aside, text).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

/// One scrape job of the Prometheus configuration.
fn job(name: &str, port: u16, scheme: &str, tls: &str, auth: Option<(&str, &str)>) -> String {
    let auth = auth.map_or(String::new(), |(user, password)| {
        format!("    basic_auth:\n      username: {user}\n      password: {password}\n")
    });
    format!(
        "  - job_name: {name}\n    scheme: {scheme}\n{tls}{auth}    static_configs:\n\
         \x20     - targets: ['127.0.0.1:{port}']\n"
    )
}

fn tls_config(ca: &Path, client: Option<(&Path, &Path)>) -> String {
    let client = client.map_or(String::new(), |(cert, key)| {
        format!(
            "      cert_file: {}\n      key_file: {}\n",
            cert.display(),
            key.display()
        )
    });
    format!("    tls_config:\n      ca_file: {}\n{client}", ca.display())
}

/// Waits until `up` of `job` is `value`, and returns the target's last
/// scrape error.
fn up_becomes(prom_port: u16, job: &str, value: u8) -> String {
    servers::wait_for(
        prom_port,
        &format!("up{{job=\"{job}\"}} == {value}"),
        Duration::from_secs(30),
    );
    let targets = servers::get_json(prom_port, "/api/v1/targets").unwrap();
    targets["data"]["activeTargets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["labels"]["job"] == job)
        .map(|t| t["lastError"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs the demo and Prometheus: scripts/e2e.sh"]
fn prometheus_scrapes_over_tls_with_basic_auth_and_client_certificates() {
    let pki = TestPki::generate("web-e2e");
    let dir = ScratchDir::new("web-e2e-files");
    let file = |name: &str, text: &str| -> PathBuf {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    file("server.crt", &pki.server_cert);
    file("server.key", &pki.server_key);
    let hash = |password: &str| bcrypt::hash(password, 6).unwrap();

    // Endpoint 1: a leaf under the test CA, TLS and basic auth.
    let web1 = dir.0.join("web1.yml");
    let tls1 = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
    write(
        &web1,
        &format!("{tls1}basic_auth_users:\n  prometheus: {}\n", hash("first")),
    );
    let port1 = free_port();
    let _demo1 = demo(port1, &web1);

    // Endpoint 2: an `openssl req -x509` certificate, client certificates
    // required and verified against the test CA.
    let self_signed = openssl_self_signed(&dir.0, "selfsigned", "IP:127.0.0.1");
    let web2 = dir.0.join("web2.yml");
    write(
        &web2,
        &format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\n  \
             client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {}\n",
            self_signed.cert_file.display(),
            dir.0.join("selfsigned-key.pem").display(),
            pki.ca_file.display()
        ),
    );
    let port2 = free_port();
    let _demo2 = demo(port2, &web2);

    let ca = pki.ca_file.clone();
    let client = (
        pki.client_cert_file.as_path(),
        pki.client_key_file.as_path(),
    );
    let config = format!(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n{}{}{}{}{}{}{}",
        job(
            "right",
            port1,
            "https",
            &tls_config(&ca, None),
            Some(("prometheus", "first"))
        ),
        job(
            "wrong",
            port1,
            "https",
            &tls_config(&ca, None),
            Some(("prometheus", "guess"))
        ),
        job("plain", port1, "http", "", Some(("prometheus", "first"))),
        job(
            "rotated",
            port1,
            "https",
            &tls_config(&ca, Some(client)),
            Some(("prometheus", "second"))
        ),
        job(
            "no_cert",
            port2,
            "https",
            &tls_config(&self_signed.cert_file, None),
            None
        ),
        job(
            "cert",
            port2,
            "https",
            &tls_config(&self_signed.cert_file, Some(client)),
            None
        ),
        job(
            "other_cert",
            port2,
            "https",
            &tls_config(
                &self_signed.cert_file,
                Some((&self_signed.cert_file, &dir.0.join("selfsigned-key.pem")))
            ),
            None
        ),
    );
    let prom_port = free_port();
    let _prometheus = start_prometheus(&dir.0, prom_port, &config, &[]);

    assert_eq!(up_becomes(prom_port, "right", 1), "");
    let wrong = up_becomes(prom_port, "wrong", 0);
    assert!(wrong.contains("401 Unauthorized"), "{wrong}");
    let plain = up_becomes(prom_port, "plain", 0);
    assert!(plain.contains("400 Bad Request"), "{plain}");
    let rotated = up_becomes(prom_port, "rotated", 0);
    assert!(rotated.contains("401"), "{rotated}");
    assert_eq!(up_becomes(prom_port, "cert", 1), "");
    let no_cert = up_becomes(prom_port, "no_cert", 0);
    assert!(no_cert.contains("certificate"), "{no_cert}");
    let other = up_becomes(prom_port, "other_cert", 0);
    assert!(other.contains("certificate"), "{other}");

    // Under the running endpoint: the password rotated and client
    // certificates required. The next scrapes follow, without a restart.
    write(
        &web1,
        &format!(
            "{tls1}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {}\n\
             basic_auth_users:\n  prometheus: {}\n",
            ca.display(),
            hash("second")
        ),
    );
    assert_eq!(up_becomes(prom_port, "rotated", 1), "");
    // The old password is refused at once; the connection it came on was
    // opened before certificates were required, and keeps that handshake
    // until the connection deadline (30 s) closes it: then the new
    // handshake asks for a certificate it does not have.
    let right = up_becomes(prom_port, "right", 0);
    assert!(
        right.contains("401") || right.contains("certificate"),
        "{right}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut error = right;
    while !error.contains("certificate") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        error = up_becomes(prom_port, "right", 0);
    }
    assert!(error.contains("certificate"), "{error}");
}
