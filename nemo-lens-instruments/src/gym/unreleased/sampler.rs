//! [`ProcessSampler`]: this process's CPU and the machine's GPUs, recorded on
//! an interval from a thread of its own.

use std::time::Duration;

use nemo_lens_core::{Instruments, Meter};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use super::super::sampling_thread::SamplingThread;
use super::attributed::ProcessCpuMetrics;
use super::gpu::Gpus;

/// Samples `gym.process.cpu.percent` and, where NVIDIA GPUs and the `nvml`
/// feature are present, `gym.process.gpu.*` per GPU, every `interval`, on a
/// background thread, until stopped or dropped.
///
/// CPU percent is this process's, per logical core: a process using two
/// cores fully reads 200. On a machine without GPUs, without the NVIDIA
/// library, or built without the `nvml` feature, the GPU gauges are simply
/// absent (one `debug` line says why). On a meter that records nothing, no
/// thread is started.
///
/// It samples on a thread of its own rather than as an observed set
/// (`#[instruments(observe)]`), because CPU percent is a rate over the time
/// since the previous read. Observed, that time would be whatever separates
/// two collections of any reader: with a Prometheus scrape every 15 s and an
/// OTLP export every 60 s the windows alternate, and a collection shortly
/// after another reads a window below [`MIN_INTERVAL`](Self::MIN_INTERVAL),
/// where the operating system's counters have not moved. The NVML reads
/// (milliseconds per GPU) would also run inside every scrape. The thread
/// keeps one window, `interval`, whoever collects.
///
/// ```
/// use std::time::Duration;
/// use nemo_lens::instruments::gym::unreleased::ProcessSampler;
/// use nemo_lens::Meter;
///
/// let meter = Meter::noop(); // telemetry.meter in a real server
/// let sampler = ProcessSampler::start(&meter, Duration::from_secs(10));
/// // ... serve ...
/// sampler.stop();
/// ```
#[derive(Debug)]
#[must_use = "the sampler stops when dropped"]
pub struct ProcessSampler {
    thread: SamplingThread,
}

impl ProcessSampler {
    /// The shortest interval: CPU usage is a difference between two reads,
    /// which the operating system only updates this often.
    pub const MIN_INTERVAL: Duration = sysinfo::MINIMUM_CPU_UPDATE_INTERVAL;

    /// Starts sampling every `interval` (at least [`MIN_INTERVAL`]); the
    /// first sample is taken one interval from now.
    ///
    /// [`MIN_INTERVAL`]: Self::MIN_INTERVAL
    pub fn start(meter: &Meter, interval: Duration) -> Self {
        if !meter.is_enabled() {
            return ProcessSampler {
                thread: SamplingThread::idle(),
            };
        }
        let meter = meter.clone();
        let thread = SamplingThread::spawn(
            "nemo-lens-sampler",
            "process sampler",
            interval.max(Self::MIN_INTERVAL),
            false,
            // Made on the thread (NVML can take a while to load); its first
            // CPU read starts the first window.
            Sampler::new,
            move |sampler| sampler.record(&meter),
        );
        ProcessSampler { thread }
    }

    /// Whether a sampling thread is running.
    pub fn is_running(&self) -> bool {
        self.thread.is_running()
    }

    /// Stops sampling and waits for the thread to finish its current sample.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

/// What the sampling thread holds between samples.
struct Sampler {
    system: System,
    pid: Option<Pid>,
    gpus: Option<Gpus>,
}

impl Sampler {
    fn new() -> Self {
        let pid = match sysinfo::get_current_pid() {
            Ok(pid) => Some(pid),
            Err(error) => {
                tracing::debug!(target: "nemo_lens", error, "no process id: CPU is not sampled");
                None
            }
        };
        let mut sampler = Sampler {
            system: System::new(),
            pid,
            gpus: Gpus::open(),
        };
        // CPU usage is the difference from the previous read: take the first.
        sampler.cpu_percent();
        sampler
    }

    fn cpu_percent(&mut self) -> Option<f64> {
        let pid = self.pid?;
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing().with_cpu(),
        );
        self.system
            .process(pid)
            .map(|process| f64::from(process.cpu_usage()))
    }

    fn record(&mut self, meter: &Meter) {
        if let Some(percent) = self.cpu_percent() {
            ProcessCpuMetrics::default()
                .cpu_percent(percent)
                .record(meter);
        }
        if let Some(gpus) = &self.gpus {
            for gpu in gpus.sample() {
                gpu.record(meter);
            }
        }
    }
}
