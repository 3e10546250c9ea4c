//! A training job's first hour, as its launcher starts it: four ranks of the
//! demo (the simulated RL trainer), none told its rank by the test, each
//! reading torchrun's or Slurm's variables.
//!
//! - Over OTLP through a real collector (rotel, from PyPI) to a receiver on
//!   the official protobuf definitions: one `nemo.run.id` on all four ranks,
//!   `dl.rank` 0 to 3, `dl.world_size` 4.
//! - With Prometheus and one port per local rank on one host: four
//!   endpoints, each scraped by Debian's Prometheus 2.42 with the setup
//!   guide's scrape configuration.
//! - With the collector down at the end: the trainer exits 0 and says once
//!   what was lost.
//!
//! Ignored by default: `scripts/e2e.sh` builds the demo with every feature
//! and sets `NEMO_LENS_DEMO_BIN`, `ROTEL_BIN` (rotel's agent, which
//! `scripts/deps.sh` installs) and `PROMETHEUS_BIN`. Every server binds
//! 127.0.0.1; every wait is bounded.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;

use crate::support::otlp_receiver::{GrpcReceiver, Received};
use crate::support::servers::{self, first_line, free_port, start_prometheus, Reaped};

const RANKS: u32 = 4;

fn demo_bin() -> PathBuf {
    PathBuf::from(
        std::env::var("NEMO_LENS_DEMO_BIN").expect("NEMO_LENS_DEMO_BIN: path of the built demo"),
    )
}

/// The demo as a launcher starts it: nothing of the test's environment but
/// `PATH`, so a variable of the machine (a real `SLURM_JOB_ID`) cannot
/// stand in for the launcher's.
fn demo(launcher: &[(String, String)], seconds: u32) -> Command {
    let mut command = Command::new(demo_bin());
    command
        .args(["--seconds", &seconds.to_string(), "--step-ms", "50"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CUDA_VISIBLE_DEVICES", "")
        .envs(launcher.iter().map(|(k, v)| (k, v)));
    command
}

/// Waits for `child` to exit, at most `timeout`, and returns its output.
fn finish(child: Child, timeout: Duration) -> Output {
    let (tx, rx) = std::sync::mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(output) => output.expect("the demo's output"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("the demo (pid {pid}) did not exit within {timeout:?}");
        }
    }
}

/// torchrun's variables for worker `rank` of a single-node job.
fn torchrun(rank: u32, run_id: &str) -> Vec<(String, String)> {
    [
        ("RANK", rank.to_string()),
        ("WORLD_SIZE", RANKS.to_string()),
        ("LOCAL_RANK", rank.to_string()),
        ("LOCAL_WORLD_SIZE", RANKS.to_string()),
        ("TORCHELASTIC_RUN_ID", run_id.to_owned()),
        ("MASTER_ADDR", "127.0.0.1".to_owned()),
        ("MASTER_PORT", "29500".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Slurm's variables for task `rank` of `srun --ntasks 4` on two nodes.
fn slurm(rank: u32, job_id: &str) -> Vec<(String, String)> {
    [
        ("SLURM_PROCID", rank.to_string()),
        ("SLURM_NTASKS", RANKS.to_string()),
        ("SLURM_LOCALID", (rank % 2).to_string()),
        ("SLURM_NODEID", (rank / 2).to_string()),
        ("SLURM_NNODES", "2".to_owned()),
        ("SLURM_JOB_ID", job_id.to_owned()),
        ("SLURM_JOB_NAME", "grpo".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn with(mut launcher: Vec<(String, String)>, extra: &[(&str, String)]) -> Vec<(String, String)> {
    launcher.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    launcher
}

/// rotel's agent receiving OTLP/gRPC on `port` and forwarding it over
/// OTLP/gRPC to `downstream`; its pid and log files in `dir`.
fn rotel(port: u16, downstream: u16, dir: &std::path::Path) -> Reaped {
    let bin = std::env::var("ROTEL_BIN").expect("ROTEL_BIN: rotel's agent (scripts/deps.sh)");
    let rotel = Reaped(
        Command::new(bin)
            .arg("start")
            .args(["--otlp-grpc-endpoint", &format!("127.0.0.1:{port}")])
            .args([
                "--otlp-http-endpoint",
                &format!("127.0.0.1:{}", free_port()),
            ])
            .args(["--exporter", "otlp"])
            .args([
                "--otlp-exporter-endpoint",
                &format!("http://127.0.0.1:{downstream}"),
            ])
            .args(["--otlp-exporter-protocol", "grpc"])
            .arg("--pid-file")
            .arg(dir.join("rotel.pid"))
            // In the foreground it logs to stdout; the file is for --daemon.
            .arg("--log-file")
            .arg(dir.join("rotel-daemon.log"))
            .stdout(std::fs::File::create(dir.join("rotel.log")).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rotel"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "rotel did not listen on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    rotel
}

/// `(dl.rank, dl.world_size, nemo.run.id)` of each resource received.
fn ranks_received(requests: &[ExportMetricsServiceRequest]) -> BTreeSet<(i64, i64, String)> {
    let mut ranks = BTreeSet::new();
    for resource in requests
        .iter()
        .flat_map(|r| &r.resource_metrics)
        .filter_map(|rm| rm.resource.as_ref())
    {
        let get = |key: &str| {
            resource
                .attributes
                .iter()
                .find(|kv| kv.key == key)
                .and_then(|kv| kv.value.as_ref()?.value.clone())
        };
        if let (
            Some(Any::IntValue(rank)),
            Some(Any::IntValue(world)),
            Some(Any::StringValue(run)),
        ) = (get("dl.rank"), get("dl.world_size"), get("nemo.run.id"))
        {
            ranks.insert((rank, world, run));
        }
    }
    ranks
}

/// Four ranks, started as `launcher` starts them, exporting through rotel:
/// the resources the receiver got.
fn four_ranks_over_otlp(
    launcher: impl Fn(u32) -> Vec<(String, String)>,
    label: &str,
) -> BTreeSet<(i64, i64, String)> {
    let dir = std::env::temp_dir().join(format!("nemo-lens-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let received = Received::default();
    let receiver_port = free_port();
    let _receiver = GrpcReceiver::start(receiver_port, received.clone());
    let rotel_port = free_port();
    let _rotel = rotel(rotel_port, receiver_port, &dir);

    let otlp = [
        ("NEMO_LENS_EXPORTER", "otlp".to_owned()),
        ("NEMO_LENS_EXPORT_STRATEGY", "all_ranks".to_owned()),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{rotel_port}"),
        ),
        ("OTEL_METRIC_EXPORT_INTERVAL", "500".to_owned()),
    ];
    let children: Vec<Child> = (0..RANKS)
        .map(|rank| {
            demo(&with(launcher(rank), &otlp), 3)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start the demo")
        })
        .collect();
    for (rank, child) in children.into_iter().enumerate() {
        let output = finish(child, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{label} rank {rank}: {stderr}");
        assert!(
            !stderr.contains("random run id") && !stderr.contains("failed"),
            "{label} rank {rank}: {stderr}"
        );
    }
    // rotel batches: wait until every rank's export has come through.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ranks = ranks_received(&received.all());
        if ranks.len() >= RANKS as usize {
            let _ = std::fs::remove_dir_all(&dir);
            return ranks;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("rotel.log")).unwrap_or_default();
            eprintln!(
                "{label}: {} requests received; rotel's log:\n{log}",
                received.count()
            );
            return ranks;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "needs the demo and rotel: scripts/e2e.sh"]
fn four_torchrun_ranks_export_one_run_over_otlp_through_rotel() {
    let run_id = "c5ea506d-torchrun";
    let ranks = four_ranks_over_otlp(|rank| torchrun(rank, run_id), "torchrun");
    let expected: BTreeSet<(i64, i64, String)> = (0..i64::from(RANKS))
        .map(|rank| (rank, i64::from(RANKS), run_id.to_owned()))
        .collect();
    assert_eq!(ranks, expected);
}

#[test]
#[ignore = "needs the demo and rotel: scripts/e2e.sh"]
fn four_slurm_tasks_export_one_run_over_otlp_through_rotel() {
    let ranks = four_ranks_over_otlp(|rank| slurm(rank, "81234"), "slurm");
    let expected: BTreeSet<(i64, i64, String)> = (0..i64::from(RANKS))
        .map(|rank| (rank, i64::from(RANKS), "81234".to_owned()))
        .collect();
    assert_eq!(ranks, expected);
}

#[test]
#[ignore = "needs the demo and Prometheus: scripts/e2e.sh"]
fn four_ranks_on_one_host_serve_a_port_each_and_prometheus_scrapes_them_all() {
    let base = servers::free_ports_in_a_row(RANKS as u16);
    let prometheus = [
        ("NEMO_LENS_EXPORTER", "prometheus".to_owned()),
        ("NEMO_LENS_EXPORT_STRATEGY", "all_ranks".to_owned()),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", base.to_string()),
        (
            "NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK",
            "true".to_owned(),
        ),
    ];
    let mut ranks: Vec<Reaped> = Vec::new();
    for rank in 0..RANKS {
        let mut child = Reaped(
            demo(&with(torchrun(rank, "job-ports"), &prometheus), 60)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("start the demo"),
        );
        let first = first_line(&mut child.0, Duration::from_secs(20));
        assert_eq!(
            first.trim(),
            format!(
                "serving Prometheus metrics at http://127.0.0.1:{}/metrics",
                base + rank as u16
            ),
            "rank {rank}"
        );
        ranks.push(child);
    }

    // The setup guide's scrape configuration, on this host.
    let targets: Vec<String> = (0..RANKS as u16)
        .map(|i| format!("'127.0.0.1:{}'", base + i))
        .collect();
    let config = format!(
        "global:\n  scrape_interval: 1s\n\
         scrape_configs:\n  - job_name: trainer\n    scrape_interval: 1s\n    static_configs:\n\
         \x20     - targets: [{}]\n",
        targets.join(", ")
    );
    let dir = std::env::temp_dir().join(format!("nemo-lens-ranks-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prom_port = free_port();
    let _prometheus = start_prometheus(&dir, prom_port, &config, &[]);

    let up = servers::wait_for(
        prom_port,
        r#"count(up{job="trainer"} == 1) == 4"#,
        Duration::from_secs(40),
    );
    assert_eq!(servers::value(&up[0]), 4.0);
    let series = servers::wait_for(
        prom_port,
        r#"count by (dl_rank, nemo_run_id, instance) (rl_reward_mean{job="trainer"})"#,
        Duration::from_secs(20),
    );
    let seen: BTreeSet<(String, String, String)> = series
        .iter()
        .map(|s| {
            (
                servers::label(s, "dl_rank").to_owned(),
                servers::label(s, "nemo_run_id").to_owned(),
                servers::label(s, "instance").to_owned(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String, String)> = (0..RANKS as u16)
        .map(|i| {
            (
                i.to_string(),
                "job-ports".to_owned(),
                format!("127.0.0.1:{}", base + i),
            )
        })
        .collect();
    assert_eq!(seen, expected);
}

#[test]
#[ignore = "needs the demo built with otlp: scripts/e2e.sh"]
fn the_trainer_exits_0_when_the_collector_is_down_and_says_once_what_was_lost() {
    // Bound and released: nothing listens there.
    let closed = free_port();
    let output = finish(
        demo(
            &with(
                torchrun(0, "job-down"),
                &[
                    ("NEMO_LENS_EXPORTER", "otlp".to_owned()),
                    (
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        format!("http://127.0.0.1:{closed}"),
                    ),
                    ("OTEL_METRIC_EXPORT_INTERVAL", "500".to_owned()),
                    ("WORLD_SIZE", "1".to_owned()),
                ],
            ),
            2,
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the demo"),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("telemetry shutdown"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    let rest = said[0]
        .strip_prefix("demo: rank 0: telemetry shutdown: the final export of ")
        .unwrap_or_else(|| panic!("{}", said[0]));
    let (points, rest) = rest.split_once(' ').unwrap();
    let points: usize = points.parse().unwrap_or_else(|_| panic!("{}", said[0]));
    assert!(points > 0, "{}", said[0]);
    assert!(
        rest.starts_with(&format!(
            "data points to http://127.0.0.1:{closed} failed, so they are lost: "
        )),
        "{}",
        said[0]
    );
    // Each cause once.
    assert!(
        !said[0].contains("tcp connect error: tcp connect error"),
        "{}",
        said[0]
    );
    assert!(said[0].contains("Connection refused"), "{}", said[0]);
}
