//! What one refresh of `nemo-lens top` costs: 16 endpoints (by default) of
//! 5,000 series each, served from this process on 127.0.0.1, read, parsed
//! and turned into rows, a number of times. Prints the CPU time a refresh
//! takes and what share of one core that is at the default 2 s interval.
//!
//! `cargo bench -p nemo-lens-cli --bench top -- [ENDPOINTS] [SERIES] [REFRESHES]`
//!
//! The CPU time is the whole process's (from /proc/self/stat), so it
//! includes the threads that serve the expositions: an upper bound.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use nemo_lens_cli::top::Fleet;

/// A nemo-lens exposition of about `series` samples: TTFT, TPOT and request
/// duration histograms by model, and a gauge and a counter per model.
fn exposition(series: usize) -> String {
    const BOUNDS: [&str; 16] = [
        "0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75",
        "1.0", "2.5", "5.0", "7.5", "10.0",
    ];
    // Per model: 3 histograms of 19 lines, 2 numbers.
    let models = series / (3 * 19 + 2);
    let mut out = String::new();
    for family in [
        "gen_ai_server_time_to_first_token_seconds",
        "gen_ai_server_time_per_output_token_seconds",
        "gen_ai_server_request_duration_seconds",
    ] {
        out += &format!("# HELP {family} x\n# TYPE {family} histogram\n");
        for m in 0..models {
            let labels =
                format!("gen_ai_request_model=\"model-{m}\",otel_scope_name=\"nemo.lens\"");
            for (i, bound) in BOUNDS.iter().enumerate() {
                out += &format!("{family}_bucket{{{labels},le=\"{bound}\"}} {}\n", i * 10);
            }
            out += &format!("{family}_bucket{{{labels},le=\"+Inf\"}} 200\n");
            out += &format!("{family}_count{{{labels}}} 200\n{family}_sum{{{labels}}} 12.5\n");
        }
    }
    out += "# TYPE nemo_inference_requests_running gauge\n";
    for m in 0..models {
        out +=
            &format!("nemo_inference_requests_running{{gen_ai_request_model=\"model-{m}\"}} 3\n");
    }
    out += "# TYPE app_requests_total counter\n";
    for m in 0..models {
        out += &format!("app_requests_total{{gen_ai_request_model=\"model-{m}\"}} 1234\n");
    }
    out
}

/// Serves `body` on 127.0.0.1 for `connections` connections.
fn serve(body: String, connections: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let response = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0_u8; 2048];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    format!("http://{address}/metrics")
}

/// CPU time of the whole process so far.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command name (which may hold spaces): utime is
    // the 12th from the state, stime the 13th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // USER_HZ is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let endpoints = args.first().copied().unwrap_or(16);
    let series = args.get(1).copied().unwrap_or(5000);
    let refreshes = args.get(2).copied().unwrap_or(20).max(1);
    let body = exposition(series);
    let lines = body.lines().filter(|l| !l.starts_with('#')).count();
    let urls: Vec<String> = (0..endpoints)
        .map(|_| serve(body.clone(), refreshes + 1))
        .collect();
    let mut fleet = Fleet::new(&urls, Duration::from_secs(5));
    fleet.refresh();
    let (cpu_before, started) = (cpu(), Instant::now());
    for _ in 0..refreshes {
        fleet.refresh();
        std::hint::black_box(fleet.rows());
    }
    let (cpu_used, wall) = (cpu() - cpu_before, started.elapsed());
    let per_refresh = cpu_used / refreshes as u32;
    println!(
        "{endpoints} endpoints x {lines} samples ({} KiB each): a refresh takes {:.1} ms of CPU \
         ({:.1} ms wall); at the default 2 s interval that is {:.1} % of one core",
        body.len() / 1024,
        per_refresh.as_secs_f64() * 1e3,
        (wall / refreshes as u32).as_secs_f64() * 1e3,
        per_refresh.as_secs_f64() / 2.0 * 100.0,
    );
}
