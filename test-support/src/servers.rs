//! Real servers for the e2e tests: child processes reaped on drop, free
//! loopback ports, plain HTTP/1.0 requests, and Prometheus with its query
//! API.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Kills and reaps the child on drop, so a failed assertion leaves nothing
/// running.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first line the child writes on its (piped) stdout, within
/// `timeout`; the rest is read and dropped until it exits, so that the pipe
/// stays open (a closed one ends the child at its next line) and never fills.
pub fn first_line(child: &mut Child, timeout: Duration) -> String {
    let stdout = child.stdout.take().expect("the child's stdout, piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
        for _ in lines {}
    });
    rx.recv_timeout(timeout)
        .expect("the child's first line on stdout")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A port of 127.0.0.1 free now with the next `count - 1` free too: the
/// base of a run of ports one per local rank (`base + local rank`), where
/// a base from [`free_port`] alone may have its neighbour taken.
pub fn free_ports_in_a_row(count: u16) -> u16 {
    for _ in 0..50 {
        let base = free_port();
        if base > u16::MAX - count {
            continue;
        }
        if (0..count).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok()) {
            return base;
        }
    }
    panic!("no {count} free ports in a row on 127.0.0.1");
}

/// The body of `GET path` on `127.0.0.1:port`, or `None` if nothing answers.
/// HTTP/1.0 so the body is neither chunked nor kept alive.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let response = http_exchange(port, &request, Duration::from_secs(5))?;
    Some(response.split_once("\r\n\r\n")?.1.to_owned())
}

/// Sends `request` (whole, HTTP/1.0 so the server closes after it) to
/// `127.0.0.1:port` and reads the whole response, head and body; `None` if
/// nothing answers within `timeout`.
pub fn http_exchange(port: u16, request: &str, timeout: Duration) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}

/// `query` percent-encoded for a URL's query string.
pub fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The body of `GET path` as JSON, or `None` if nothing answers yet.
pub fn get_json(port: u16, path: &str) -> Option<Value> {
    serde_json::from_str(&http_get(port, path)?).ok()
}

/// `data.result` of an instant query; `Err` carries Prometheus's error (a
/// bad expression), `Ok(None)` means no answer yet.
pub fn query(port: u16, promql: &str) -> Result<Option<Vec<Value>>, String> {
    let Some(json) = get_json(port, &format!("/api/v1/query?query={}", encode(promql))) else {
        return Ok(None);
    };
    if json["status"] != "success" {
        return Err(format!("{promql}: {}", json["error"]));
    }
    Ok(json["data"]["result"].as_array().cloned())
}

/// Polls `promql` every 500 ms until it has a result, at most `timeout`;
/// the empty result after the deadline.
pub fn poll(port: u16, promql: &str, timeout: Duration) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        match query(port, promql) {
            Ok(Some(result)) if !result.is_empty() => return result,
            Err(e) => panic!("Prometheus rejected a query: {e}"),
            _ => {}
        }
        if Instant::now() >= deadline {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// [`poll`], failing when nothing comes.
pub fn wait_for(port: u16, promql: &str, timeout: Duration) -> Vec<Value> {
    let result = poll(port, promql, timeout);
    assert!(
        !result.is_empty(),
        "no result for {promql} within {timeout:?}"
    );
    result
}

pub fn label<'a>(series: &'a Value, name: &str) -> &'a str {
    series["metric"][name].as_str().unwrap_or("")
}

pub fn value(series: &Value) -> f64 {
    series["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Starts `PROMETHEUS_BIN` (else `prometheus` on the path) on
/// `127.0.0.1:port` with `config` (YAML) written into `dir`, its log in
/// `dir/prometheus.log`, and `features` as `--enable-feature`.
/// Prometheus with native histograms on, scraping `127.0.0.1:target_port`
/// every second as job `job`, its data in a fresh temporary directory; and
/// the port its API answers on.
pub fn prometheus_scraping(job: &str, target_port: u16) -> (Prometheus, u16) {
    let dir = std::env::temp_dir().join(format!("nemo-lens-{job}-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let config = format!(
        "global:\n  scrape_interval: 1s\n\
         scrape_configs:\n  - job_name: {job}\n    static_configs:\n\
         \x20     - targets: ['127.0.0.1:{target_port}']\n"
    );
    (
        start_prometheus(&dir, port, &config, &["native-histograms"]),
        port,
    )
}

/// A Prometheus the test started: killed when dropped, and its data
/// directory removed then unless the test is failing (its log is in it).
pub struct Prometheus {
    process: Reaped,
    dir: PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.process.0.kill();
        let _ = self.process.0.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

pub fn start_prometheus(dir: &Path, port: u16, config: &str, features: &[&str]) -> Prometheus {
    let prometheus = std::env::var("PROMETHEUS_BIN").unwrap_or_else(|_| "prometheus".into());
    let config_path = dir.join("prometheus.yml");
    std::fs::write(&config_path, config).unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let mut command = Command::new(&prometheus);
    command
        .arg(format!("--config.file={}", config_path.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"));
    if !features.is_empty() {
        command.arg(format!("--enable-feature={}", features.join(",")));
    }
    let process = Reaped(
        command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus (set PROMETHEUS_BIN or install it)"),
    );
    Prometheus {
        process,
        dir: dir.to_path_buf(),
    }
}
