//! The process sampler on this machine: the CPU gauge is exported; without a
//! GPU (or the NVIDIA library, or the `nvml` feature) the GPU gauges are
//! absent and one debug line says why. Each test in a process of its own,
//! since it installs a global `tracing` subscriber to hear the sampler's
//! thread.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nemo_lens::instruments::gym::unreleased::ProcessSampler;
use nemo_lens::Meter;

use crate::support::messages::Messages;
use crate::support::{own_process, Harness};

/// The subscriber every test installs before starting a sampler, so no
/// sampler thread speaks before it listens.
fn messages() -> &'static Messages {
    static MESSAGES: OnceLock<Messages> = OnceLock::new();
    MESSAGES.get_or_init(|| {
        let messages = Messages::default();
        tracing::subscriber::set_global_default(messages.clone()).unwrap();
        messages
    })
}

#[test]
fn cpu_is_sampled_and_absent_gpus_are_said_once_at_debug() {
    own_process!(cpu_is_sampled_and_absent_gpus_are_said_once_at_debug);
    let messages = messages();

    let harness = Harness::new();
    let sampler = ProcessSampler::start(&harness.meter, Duration::from_millis(200));
    assert!(sampler.is_running());
    // Keep a core busy so the process has CPU time to report.
    let deadline = Instant::now() + Duration::from_secs(10);
    let cpu = loop {
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(spin.elapsed());
        }
        let points = harness.points_of("gym.process.cpu.percent");
        if let Some(point) = points.into_iter().find(|p| p.number() > 0.0) {
            break point;
        }
        assert!(Instant::now() < deadline, "no CPU sample within 10 s");
    };
    assert_eq!(cpu.unit, "%");
    assert!(cpu.attributes.is_empty());
    // Percent of one core: at most 100 per core of this machine.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = 100.0 * cores as f64 + 1e-6;
    assert!(
        cpu.number() > 0.0 && cpu.number() <= most,
        "{}",
        cpu.number()
    );
    sampler.stop();

    let gpu_points: Vec<_> = harness
        .points()
        .into_iter()
        .filter(|p| p.name.starts_with("gym.process.gpu."))
        .collect();
    let said: Vec<String> = messages.said();
    let gpu_lines: Vec<&String> = said
        .iter()
        .filter(|m| m.contains("GPU gauges are not recorded"))
        .collect();
    if gpu_points.is_empty() {
        assert_eq!(gpu_lines.len(), 1, "one line says why: {said:?}");
        assert!(gpu_lines[0].starts_with("DEBUG"), "{said:?}");
    } else {
        // A machine with NVIDIA GPUs and the nvml feature: every GPU gauge
        // carries its index and UUID.
        assert!(gpu_points
            .iter()
            .all(|p| p.attr("nemo.gym.gpu.index").is_some()
                && p.str_attr("nemo.gym.gpu.uuid").is_some()));
    }
    assert!(
        said.iter()
            .all(|m| !m.starts_with("WARN") && !m.starts_with("ERROR")),
        "no warning or error: {said:?}"
    );
}

#[test]
fn a_disabled_meter_starts_no_thread() {
    own_process!(a_disabled_meter_starts_no_thread);
    messages();
    let sampler = ProcessSampler::start(&Meter::noop(), Duration::from_millis(200));
    assert!(!sampler.is_running());
    sampler.stop();
}

#[test]
fn stopping_returns_promptly_whatever_the_interval() {
    own_process!(stopping_returns_promptly_whatever_the_interval);
    messages();
    let harness = Harness::new();
    let sampler = ProcessSampler::start(&harness.meter, Duration::from_secs(3600));
    let started = Instant::now();
    drop(sampler);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
