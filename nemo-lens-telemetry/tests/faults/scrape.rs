//! The scrape endpoint under slow clients, bursts, pipelining, oversize
//! input, and at idle.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

use crate::serial;

fn scrape_endpoint() -> TelemetryHandle {
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
    ]))
    .unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .setup(&config, 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .u64_counter("fault.requests")
        .build()
        .add(7, &[]);
    handle
}

const SCRAPE: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

#[derive(Debug)]
#[allow(dead_code)] // `Other`'s text is read through `Debug` in failure messages
enum Outcome {
    /// Status code and whole-response time.
    Status(u16, Duration),
    Reset,
    Other(String),
}

/// One scrape on a fresh connection, read to the end.
fn scrape(addr: SocketAddr, request: &[u8], timeout: Duration) -> (Outcome, Option<Duration>) {
    let begun = Instant::now();
    let attempt = || -> std::io::Result<(Vec<u8>, Option<Duration>)> {
        let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.write_all(request)?;
        let sent = Instant::now();
        let mut response = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        let mut first_byte = None;
        loop {
            let n = stream.read(&mut buf)?;
            if n == 0 {
                break;
            }
            first_byte.get_or_insert_with(|| sent.elapsed());
            response.extend_from_slice(&buf[..n]);
        }
        Ok((response, first_byte))
    };
    match attempt() {
        Ok((response, first_byte)) => {
            let text = String::from_utf8_lossy(&response);
            let status = text
                .strip_prefix("HTTP/1.1 ")
                .and_then(|rest| rest.get(..3))
                .and_then(|code| code.parse().ok());
            let complete = text.contains("\r\n\r\n");
            match status {
                Some(code) if complete => (Outcome::Status(code, begun.elapsed()), first_byte),
                _ => (Outcome::Other(format!("incomplete: {text:?}")), first_byte),
            }
        }
        Err(e) if e.kind() == ErrorKind::ConnectionReset => (Outcome::Reset, None),
        Err(e) => (Outcome::Other(e.to_string()), None),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// `count` slow clients until `stop`, reconnecting whenever the server
/// closes them: even ones send a request one byte every 100 ms and never
/// finish it, odd ones connect and say nothing.
fn slow_loris(
    addr: SocketAddr,
    count: usize,
    stop: Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<u32>> {
    (0..count)
        .map(|i| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(30);
                let running = || !stop.load(Ordering::Relaxed) && Instant::now() < deadline;
                let mut connections = 0;
                while running() {
                    let Ok(mut stream) = TcpStream::connect(addr) else {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    };
                    connections += 1;
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
                    let head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
                    let mut sent = 0;
                    let mut buf = [0u8; 512];
                    while running() {
                        if i % 2 == 0 {
                            let byte = if sent < head.len() {
                                &head[sent..=sent]
                            } else {
                                b"a"
                            };
                            if stream.write_all(byte).is_err() {
                                break;
                            }
                            sent += 1;
                        }
                        // Anything from the server (a 408) or its close
                        // ends this connection.
                        match stream.read(&mut buf) {
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    ErrorKind::WouldBlock | ErrorKind::TimedOut
                                ) => {}
                            _ => break,
                        }
                    }
                }
                connections
            })
        })
        .collect()
}

#[test]
fn scrapes_succeed_fast_while_fifty_slow_loris_clients_hold_connections() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let loris = slow_loris(addr, 50, stop.clone());
    std::thread::sleep(Duration::from_millis(300));

    // 7 s of scrapes spans at least one header-read timeout of the slow
    // clients, so their reconnects are measured too.
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    let begun = Instant::now();
    while begun.elapsed() < Duration::from_secs(7) && latencies.len() + failures.len() < 200 {
        match scrape(addr, SCRAPE, Duration::from_secs(2)).0 {
            Outcome::Status(200, took) => latencies.push(took),
            other => failures.push(other),
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    let slow_connections: u32 = loris.into_iter().map(|t| t.join().unwrap()).sum();

    let total = latencies.len() + failures.len();
    let fast = latencies
        .iter()
        .filter(|t| **t < Duration::from_millis(100))
        .count();
    latencies.sort();
    let rate = fast as f64 * 100.0 / total as f64;
    eprintln!(
        "slow-loris: 50 slow clients, 25 trickling and 25 silent ({slow_connections} \
         connections over the run); \
         {fast}/{total} scrapes = {rate:.1}% returned 200 in <100 ms; \
         median {:?}, p99 {:?}, max {:?}; failures {failures:?}",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
    );
    assert!(total >= 100, "only {total} scrapes in the window");
    assert!(
        rate >= 99.0,
        "{rate:.1}% of scrapes fast; failures {failures:?}"
    );
    assert!(slow_connections >= 50);
}

#[test]
fn a_burst_of_200_scrapers_gets_only_complete_responses() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let clients = 200;
    let barrier = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                scrape(addr, SCRAPE, Duration::from_secs(10)).0
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let ok = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Status(200, _)))
        .count();
    let busy = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Status(503, _)))
        .count();
    let resets = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Reset))
        .count();
    let other: Vec<_> = outcomes
        .iter()
        .filter(|o| !matches!(o, Outcome::Status(200 | 503, _) | Outcome::Reset))
        .collect();
    let mut times: Vec<Duration> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Status(_, t) => Some(*t),
            _ => None,
        })
        .collect();
    times.sort();
    eprintln!(
        "burst: {clients} concurrent scrapers: {ok} got 200, {busy} got 503, {resets} resets, \
         {} other; slowest complete response {:?}",
        other.len(),
        times.last().copied().unwrap_or_default()
    );
    assert_eq!(resets, 0, "{outcomes:?}");
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(ok + busy, clients);
}

/// With the serving pool nearly full of silent clients, a burst gets a mix
/// of 200 and 503, every response complete and no reset.
#[test]
fn a_burst_beyond_the_connection_cap_gets_readable_503s() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let silent: Vec<TcpStream> = (0..240)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let clients = 100;
    let barrier = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                scrape(addr, SCRAPE, Duration::from_secs(10)).0
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    drop(silent);
    let count = |code| {
        outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Status(c, _) if *c == code))
            .count()
    };
    let (ok, busy) = (count(200), count(503));
    let resets = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Reset))
        .count();
    eprintln!(
        "burst beyond the cap: 240 silent connections held, {clients} concurrent scrapers: \
         {ok} got 200, {busy} got a complete 503, {resets} resets"
    );
    assert_eq!(resets, 0, "{outcomes:?}");
    assert_eq!(ok + busy, clients, "{outcomes:?}");
    // 16 slots were free; more 200s only if some silent clients were not
    // accepted yet.
    assert!(busy >= clients / 2, "{ok} served with 16 free slots");
}

#[test]
fn pipelined_requests_are_all_answered_in_order() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let mut pipelined = Vec::new();
    pipelined.extend_from_slice(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
    pipelined.extend_from_slice(b"GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n");
    pipelined.extend_from_slice(b"HEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let begun = Instant::now();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(&pipelined).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let statuses: Vec<&str> = response
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &response[i + 9..i + 12])
        .collect();
    eprintln!(
        "pipelining: 3 requests in one write answered {statuses:?} in {:?}",
        begun.elapsed()
    );
    assert_eq!(statuses, ["200", "404", "200"]);
    assert!(
        response
            .lines()
            .any(|l| l.starts_with("fault_requests_total{") && l.ends_with(" 7")),
        "{response}"
    );
    assert!(begun.elapsed() < Duration::from_secs(1));
}

#[test]
fn oversize_and_malformed_input_is_answered_and_survived() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let timeout = Duration::from_secs(5);
    let mut huge_header = b"GET /metrics HTTP/1.1\r\nX-Big: ".to_vec();
    huge_header.extend(std::iter::repeat_n(b'a', 1024 * 1024));
    let mut long_target = b"GET /metrics?".to_vec();
    long_target.extend(std::iter::repeat_n(b'q', 64 * 1024));
    long_target.extend_from_slice(b" HTTP/1.1\r\n\r\n");
    let binary: Vec<u8> = (0..64 * 1024).map(|i| (i * 7 % 256) as u8).collect();
    let cases: [(&str, &[u8], u16); 5] = [
        ("1 MiB header", &huge_header, 431),
        ("64 KiB target", &long_target, 431),
        ("64 KiB of binary", &binary, 400),
        (
            "bare-LF request",
            b"GET /metrics HTTP/1.1\nHost: a\nConnection: close\n\n",
            200,
        ),
        (
            "absolute-form target",
            b"GET http://127.0.0.1/metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            200,
        ),
    ];
    for (name, request, expected) in cases {
        let (outcome, _) = scrape(addr, request, timeout);
        eprintln!("oversize/malformed: {name}: {outcome:?}");
        match outcome {
            Outcome::Status(code, took) => {
                assert_eq!(code, expected, "{name}");
                assert!(took < Duration::from_secs(1), "{name} took {took:?}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // A head that never ends is cut off at the header-read timeout with 408.
    let begun = Instant::now();
    let (outcome, _) = scrape(
        addr,
        b"GET /metrics HTTP/1.1\r\nHost: a\r\n",
        Duration::from_secs(10),
    );
    let took = begun.elapsed();
    eprintln!("oversize/malformed: unfinished head: {outcome:?} after {took:?}");
    assert!(matches!(outcome, Outcome::Status(408, _)), "{outcome:?}");
    assert!(
        took >= Duration::from_secs(4) && took < Duration::from_secs(7),
        "{took:?}"
    );
    assert!(matches!(
        scrape(addr, SCRAPE, timeout).0,
        Outcome::Status(200, _)
    ));
}

#[test]
fn first_byte_latency_is_sub_millisecond_scale() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    let mut first_bytes: Vec<Duration> = (0..200)
        .filter_map(|_| scrape(addr, SCRAPE, Duration::from_secs(2)).1)
        .collect();
    first_bytes.sort();
    let median = percentile(&first_bytes, 0.5);
    let p99 = percentile(&first_bytes, 0.99);
    eprintln!("first byte: 200 sequential scrapes: median {median:?}, p99 {p99:?}");
    assert_eq!(first_bytes.len(), 200);
    assert!(median < Duration::from_millis(5), "median {median:?}");
}

/// Context switches of the scrape server's thread: a polling loop shows up
/// as tens per second.
#[cfg(target_os = "linux")]
fn server_thread_switches() -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        // Thread names are cut to 15 bytes: "nemo-lens-prome".
        if comm.trim() == "nemo-lens-prome" {
            let status = std::fs::read_to_string(path.join("status")).ok()?;
            let count = |key: &str| -> u64 {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            };
            return Some(count("voluntary_ctxt_switches:") + count("nonvoluntary_ctxt_switches:"));
        }
    }
    None
}

#[cfg(target_os = "linux")]
#[test]
fn the_idle_endpoint_does_not_wake_up() {
    let _serial = serial();
    let handle = scrape_endpoint();
    let addr = handle.prometheus_addr().unwrap();
    assert!(matches!(
        scrape(addr, SCRAPE, Duration::from_secs(2)).0,
        Outcome::Status(200, _)
    ));
    // Let the served connection's linger and timers finish first.
    std::thread::sleep(Duration::from_millis(1500));
    let before = server_thread_switches().expect("the server thread");
    std::thread::sleep(Duration::from_secs(3));
    let after = server_thread_switches().expect("the server thread");
    let wakeups = after - before;
    eprintln!("idle: the scrape server thread woke {wakeups} times in 3 s");
    assert!(wakeups <= 1, "{wakeups} wake-ups in 3 s at idle");
    drop(handle);
}
