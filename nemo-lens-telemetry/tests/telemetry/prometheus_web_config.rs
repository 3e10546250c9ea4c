//! The scrape endpoint under a web configuration file
//! (`NEMO_LENS_PROMETHEUS_WEB_CONFIG`): TLS, basic auth, client
//! certificates, headers, and the file changed under a running endpoint.
//! Certificates are made in the test (rcgen, and `openssl req -x509`); the
//! client is rustls.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::servers::http_exchange;
use crate::support::tls::{https_get, openssl_self_signed, ScratchDir, TestPki};
use crate::support::{exclusive, Exclusive};

use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupError, SetupOptions, TelemetryHandle};

fn serial() -> Exclusive {
    exclusive()
}

/// Telemetry serving Prometheus on a free loopback port under `web`.
fn serve_under(web: &Path) -> Result<TelemetryHandle, SetupError> {
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
        ("NEMO_LENS_PROMETHEUS_WEB_CONFIG", web.to_str().unwrap()),
    ]))
    .unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .setup(&config, 0, 1)?;
    let steps = handle.meter.u64_counter("app.steps").build();
    steps.add(3, &[]);
    Ok(handle)
}

fn port(handle: &TelemetryHandle) -> u16 {
    handle.prometheus_addr().unwrap().port()
}

fn write(path: &Path, text: &str) {
    // Written aside and renamed, as configuration managers do, so a reader
    // never sees half a file.
    let aside = path.with_extension("tmp");
    std::fs::write(&aside, text).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

fn hash(password: &str, cost: u32) -> String {
    bcrypt::hash(password, cost).unwrap()
}

/// A PKI in a scratch directory, with the server's certificate and key as
/// files next to the web configuration.
fn pki(name: &str) -> (TestPki, ScratchDir) {
    let pki = TestPki::generate(name);
    let dir = ScratchDir::new(&format!("{name}-web"));
    std::fs::write(dir.0.join("server.crt"), &pki.server_cert).unwrap();
    std::fs::write(dir.0.join("server.key"), &pki.server_key).unwrap();
    (pki, dir)
}

#[test]
fn tls_and_basic_auth_let_the_right_scraper_in_and_nobody_else() {
    let _serial = serial();
    let (pki, dir) = pki("web-auth");
    let web = dir.0.join("web.yml");
    write(
        &web,
        &format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: {}\n\
             http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n",
            hash("s3cret", 4)
        ),
    );
    let handle = serve_under(&web).unwrap();
    let port = port(&handle);
    assert_eq!(
        handle.prometheus_url(),
        Some(format!("https://127.0.0.1:{port}/metrics"))
    );

    let ok = https_get(port, &pki.ca_cert, None, Some(("prometheus", "s3cret"))).unwrap();
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(
        ok.body
            .contains("app_steps_total{otel_scope_name=\"nemo.lens\""),
        "{}",
        ok.body
    );
    assert!(
        ok.head.contains("x-content-type-options: nosniff"),
        "{}",
        ok.head
    );

    for (who, credentials) in [
        ("a wrong password", Some(("prometheus", "guess"))),
        ("an unknown user", Some(("root", "s3cret"))),
        ("no credentials", None),
    ] {
        let refused = https_get(port, &pki.ca_cert, None, credentials).unwrap();
        assert_eq!(refused.status, 401, "{who}: {refused:?}");
        assert!(
            refused.head.contains("www-authenticate: basic"),
            "{who}: {}",
            refused.head
        );
        // The headers go on refusals too, as exporter-toolkit's do.
        assert!(
            refused.head.contains("x-content-type-options: nosniff"),
            "{who}"
        );
        assert!(!refused.body.contains("app_steps"), "{who}");
    }

    // Plain HTTP to the TLS port: a 400 that says why, then closed.
    let plain = http_exchange(
        port,
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
        Duration::from_secs(5),
    )
    .unwrap();
    assert!(plain.starts_with("HTTP/1.0 400 Bad Request\r\n"), "{plain}");
    assert!(
        plain.ends_with("Client sent an HTTP request to an HTTPS server.\n"),
        "{plain}"
    );
    // A client that does not trust the certificate is refused by itself.
    let err = https_get(
        port,
        &std::fs::read_to_string(&pki.other_ca_file).unwrap(),
        None,
        None,
    )
    .unwrap_err();
    assert!(err.contains("UnknownIssuer"), "{err}");
    handle.shutdown().unwrap();
}

#[test]
fn a_wrong_password_costs_bcrypt_whether_or_not_the_user_exists() {
    let _serial = serial();
    let (pki, dir) = pki("web-timing");
    let web = dir.0.join("web.yml");
    write(
        &web,
        &format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: {}\n",
            hash("s3cret", 9)
        ),
    );
    let handle = serve_under(&web).unwrap();
    let port = port(&handle);
    let timed = |user: &str, password: &str| {
        let started = Instant::now();
        let answer = https_get(port, &pki.ca_cert, None, Some((user, password))).unwrap();
        (answer.status, started.elapsed())
    };
    // Each first attempt pays bcrypt (at the configured cost, for the
    // unknown user too); the repeat is answered from the cache.
    let (known, known_first) = timed("prometheus", "guess-1");
    let (unknown, unknown_first) = timed("nobody", "guess-2");
    let (_, known_again) = timed("prometheus", "guess-1");
    assert_eq!((known, unknown), (401, 401));
    // Not a timing benchmark: a bcrypt at cost 9 takes tens of
    // milliseconds, a cached answer well under one; the unknown user's
    // refusal must be of the first kind.
    assert!(
        unknown_first * 4 > known_first,
        "unknown {unknown_first:?} vs known {known_first:?}"
    );
    assert!(
        known_again * 4 < known_first,
        "cached {known_again:?} vs first {known_first:?}"
    );
    handle.shutdown().unwrap();
}

#[test]
fn client_certificates_required_by_the_ca_and_changes_followed_without_a_restart() {
    let _serial = serial();
    let (pki, dir) = pki("web-mtls");
    let web = dir.0.join("web.yml");
    let tls_only = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
    write(&web, tls_only);
    let handle = serve_under(&web).unwrap();
    let port = port(&handle);
    assert_eq!(
        https_get(port, &pki.ca_cert, None, None).unwrap().status,
        200
    );

    // Client certificates required from now on: the next connection
    // without one is refused, one signed by the CA gets in.
    write(
        &web,
        &format!(
            "{tls_only}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {}\n",
            pki.ca_file.display()
        ),
    );
    let err = https_get(port, &pki.ca_cert, None, None).unwrap_err();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let client_cert = std::fs::read_to_string(&pki.client_cert_file).unwrap();
    let client_key = std::fs::read_to_string(&pki.client_key_file).unwrap();
    let ok = https_get(port, &pki.ca_cert, Some((&client_cert, &client_key)), None).unwrap();
    assert_eq!(ok.status, 200, "{ok:?}");
    // A self-signed client certificate the CA never signed is refused.
    let stranger = openssl_self_signed(&dir.0, "stranger", "DNS:stranger");
    assert!(https_get(
        port,
        &pki.ca_cert,
        Some((&stranger.cert, &stranger.key)),
        None
    )
    .is_err());

    // A password added and then rotated: followed at the next request.
    let with_user = |password: &str| {
        format!(
            "{tls_only}basic_auth_users:\n  prometheus: {}\n",
            hash(password, 4)
        )
    };
    write(&web, &with_user("first"));
    assert_eq!(
        https_get(port, &pki.ca_cert, None, Some(("prometheus", "first")))
            .unwrap()
            .status,
        200
    );
    write(&web, &with_user("second"));
    assert_eq!(
        https_get(port, &pki.ca_cert, None, Some(("prometheus", "first")))
            .unwrap()
            .status,
        401
    );
    assert_eq!(
        https_get(port, &pki.ca_cert, None, Some(("prometheus", "second")))
            .unwrap()
            .status,
        200
    );

    // A rotated certificate (another CA's leaf in place): the next
    // handshake presents it.
    let rotated = TestPki::generate("web-mtls-rotated");
    std::fs::write(dir.0.join("server.crt.new"), &rotated.server_cert).unwrap();
    std::fs::write(dir.0.join("server.key.new"), &rotated.server_key).unwrap();
    std::fs::rename(dir.0.join("server.key.new"), dir.0.join("server.key")).unwrap();
    std::fs::rename(dir.0.join("server.crt.new"), dir.0.join("server.crt")).unwrap();
    assert!(https_get(port, &pki.ca_cert, None, Some(("prometheus", "second"))).is_err());
    assert_eq!(
        https_get(port, &rotated.ca_cert, None, Some(("prometheus", "second")))
            .unwrap()
            .status,
        200
    );

    // A broken edit closes the endpoint rather than opening it.
    write(
        &web,
        "tls_server_config:\n  cert_file: server.crt\n  key_fille: x\n",
    );
    assert!(https_get(port, &rotated.ca_cert, None, Some(("prometheus", "second"))).is_err());
    handle.shutdown().unwrap();
}

#[test]
fn a_bad_file_stops_setup_naming_the_file_or_the_key() {
    let _serial = serial();
    let dir = ScratchDir::new("web-errors");
    let missing = dir.0.join("missing.yml");
    let err = serve_under(&missing).unwrap_err();
    assert!(matches!(err, SetupError::Exporter(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!(
            "cannot read the Prometheus web configuration {}",
            missing.display()
        )),
        "{err}"
    );

    let web = dir.0.join("web.yml");
    let cases = [
        (
            "tls_server_config:\n  cert_filse: server.crt\n",
            "a key of tls_server_config",
            "cert_filse",
        ),
        (
            "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version: TLS111\n",
            "tls_server_config.min_version",
            "TLS111",
        ),
        (
            "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: Always\n",
            "tls_server_config.client_auth_type",
            "Always",
        ),
        ("basic_auth_users:\n  john: doe\n", "basic_auth_users.john", "<hidden>"),
        (
            "http_server_config:\n  headers:\n    Content-Type: foo\n",
            "http_server_config.headers",
            "Content-Type",
        ),
    ];
    for (text, key, value) in cases {
        write(&web, text);
        let err = serve_under(&web).unwrap_err();
        let SetupError::Config(config) = &err else {
            panic!("{text}: {err:?}")
        };
        assert_eq!(
            config.variable,
            format!("{key} in {}", web.display()),
            "{text}"
        );
        assert_eq!(config.value, value, "{text}");
    }

    // A certificate that does not load names its file.
    std::fs::write(dir.0.join("server.crt"), "not a certificate").unwrap();
    std::fs::write(dir.0.join("server.key"), "not a key").unwrap();
    write(
        &web,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n",
    );
    let err = serve_under(&web).unwrap_err();
    assert!(matches!(err, SetupError::Exporter(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!(
            "cert_file {} does not load",
            dir.0.join("server.crt").display()
        )),
        "{err}"
    );
}

/// exporter-toolkit's own test configurations, read at their source (its
/// repository's `web/`, named by `EXPORTER_TOOLKIT_WEB`; not copied here),
/// each accepted or refused at load as its `tls_config_test.go` expects.
/// Prints the table of the note.
#[test]
#[ignore = "needs exporter-toolkit's web/ directory: EXPORTER_TOOLKIT_WEB=<checkout>/web"]
fn exporter_toolkits_test_configurations_are_accepted_or_refused_as_there() {
    use nemo_lens_prometheus::web_config::WebConfig;
    let web = std::path::PathBuf::from(
        std::env::var("EXPORTER_TOOLKIT_WEB").expect("EXPORTER_TOOLKIT_WEB"),
    );
    // What exporter-toolkit's tests expect when the file is loaded (the
    // server started): refused, with the reason its test names; every other
    // file there is accepted (some then refuse clients, which the tests
    // above and web_config_e2e cover here).
    let refused = [
        ("web_config_junk.yml", "YAML error"),
        ("web_config_junk_key.yml", "YAML error"),
        (
            "web_config_noAuth_certPath_empty.bad.yml",
            "missing one of cert or cert_file",
        ),
        (
            "web_config_noAuth_cert_empty.bad.yml",
            "missing one of cert or cert_file",
        ),
        (
            "web_config_noAuth_keyPath_empty.bad.yml",
            "missing one of key or key_file",
        ),
        (
            "web_config_noAuth_key_empty.bad.yml",
            "missing one of key or key_file",
        ),
        (
            "web_config_noAuth_certPath_keyPath_empty.bad.yml",
            "missing one of cert or cert_file",
        ),
        ("web_config_noAuth_certPath_invalid.bad.yml", "no such file"),
        ("web_config_noAuth_keyPath_invalid.bad.yml", "no such file"),
        (
            "web_config_noAuth_certPath_keyPath_invalid.bad.yml",
            "no such file",
        ),
        (
            "web_config_noAuth.bad.yml",
            "client CA's configured without a Client Auth Policy",
        ),
        ("web_config_auth_clientCAs_invalid.bad.yml", "no such file"),
        (
            "web_config_auth_user_list_invalid.bad.yml",
            "not a bcrypt hash",
        ),
        (
            "web_config_noAuth_inventedCiphers.bad.yml",
            "unknown cipher",
        ),
        ("web_config_noAuth_inventedCurves.bad.yml", "unknown curve"),
        (
            "web_config_noAuth_wrongTLSVersion.bad.yml",
            "unknown TLS version",
        ),
        (
            "web_config_noAuth_noHTTP2Cipher.bad.yml",
            "no HTTP/2-required cipher",
        ),
        (
            "web_config_headers_content_type_options.bad.yml",
            "invalid header value",
        ),
        (
            "web_config_headers_frame_options.bad.yml",
            "invalid header value",
        ),
        (
            "web_config_headers_extra_header.bad.yml",
            "header cannot be configured",
        ),
    ];
    let mut files: Vec<_> = std::fs::read_dir(web.join("testdata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    let mut disagree = Vec::new();
    println!("| file | exporter-toolkit | nemo-lens |");
    println!("|---|---|---|");
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap().to_owned();
        let theirs = refused
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, why)| *why);
        let ours = WebConfig::load(&file)
            .map(|_| ())
            .map_err(|e| e.to_string());
        println!(
            "| {name} | {} | {} |",
            theirs.map_or("accepted".to_owned(), |why| format!("refused: {why}")),
            match &ours {
                Ok(()) => "accepted".to_owned(),
                Err(e) => format!(
                    "refused: {}",
                    e.replace(&web.display().to_string(), "…")
                        .replace('|', "\\|")
                ),
            }
        );
        if theirs.is_some() != ours.is_err() {
            disagree.push(name);
        }
    }
    assert!(
        disagree.is_empty(),
        "outcomes differ from exporter-toolkit's: {disagree:?}"
    );
}

#[test]
fn client_allowed_sans_let_in_only_the_named_clients() {
    let _serial = serial();
    let (pki, dir) = pki("web-sans");
    let web = dir.0.join("web.yml");
    let with_sans = |sans: &str| {
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  \
             client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {}\n  \
             client_allowed_sans: [{sans}]\n",
            pki.ca_file.display()
        )
    };
    // The test CA's client certificate carries the DNS name nemo-lens-client.
    write(&web, &with_sans("\"other\", \"nemo-lens-client\""));
    let handle = serve_under(&web).unwrap();
    let port = port(&handle);
    let cert = std::fs::read_to_string(&pki.client_cert_file).unwrap();
    let key = std::fs::read_to_string(&pki.client_key_file).unwrap();
    let ok = https_get(port, &pki.ca_cert, Some((&cert, &key)), None).unwrap();
    assert_eq!(ok.status, 200, "{ok:?}");
    write(&web, &with_sans("\"bad\""));
    let err = https_get(port, &pki.ca_cert, Some((&cert, &key)), None).unwrap_err();
    // The alert Go's server sends for it.
    assert!(err.contains("BadCertificate"), "{err}");
    handle.shutdown().unwrap();
}

#[test]
fn the_rate_limit_answers_429_past_its_burst() {
    let _serial = serial();
    let (pki, dir) = pki("web-rate");
    let web = dir.0.join("web.yml");
    write(
        &web,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
         rate_limit:\n  interval: 1m\n  burst: 2\n",
    );
    let handle = serve_under(&web).unwrap();
    let port = port(&handle);
    let statuses: Vec<u16> = (0..3)
        .map(|_| https_get(port, &pki.ca_cert, None, None).unwrap().status)
        .collect();
    assert_eq!(statuses, [200, 200, 429]);
    handle.shutdown().unwrap();
}
