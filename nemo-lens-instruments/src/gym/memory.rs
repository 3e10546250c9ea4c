//! NeMo-Gym 0.7.0's memory profiler: each Gym server's process tree and the
//! host's memory, sampled on an interval ([`MemoryProfiler`]) into
//! [`ServerMemoryMetrics`] and [`HostMemoryMetrics`].

mod host;
#[cfg(target_os = "linux")]
mod process_tree;
mod sets;

use std::collections::HashMap;
use std::time::Duration;

use nemo_lens_core::config::{ConfigError, EnvLookup};
use nemo_lens_core::{Instruments, Meter};
use opentelemetry::StringValue;

pub use sets::{
    HostMemoryMetrics, HostMemoryMetricsSet, ServerMemoryMetrics, ServerMemoryMetricsSet,
};

use super::sampling_thread::SamplingThread;
use super::values::MemoryType;

/// The variable that turns the profiler on (`1`, `true`, `yes`, `on`; off
/// by default), as NeMo-Gym 0.7.0 reads it:
/// `"NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED"`.
pub const ENABLED_VARIABLE: &str = "NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED";
/// The variable that sets the interval in seconds (default 1, at least
/// 0.001), read only when profiling is on:
/// `"NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS"`.
pub const INTERVAL_VARIABLE: &str = "NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS";

/// A server process the profiler samples: the root Gym spawned for it, and
/// every descendant of that root at each sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GymServer {
    /// `nemo.gym.server.name`.
    pub name: StringValue,
    /// `nemo.gym.server.type`.
    pub server_type: StringValue,
    /// The root process (`process.pid`).
    pub pid: u32,
}

impl GymServer {
    /// The server `name` of type `server_type` whose root process is `pid`.
    pub fn new(
        name: impl Into<StringValue>,
        server_type: impl Into<StringValue>,
        pid: u32,
    ) -> Self {
        GymServer {
            name: name.into(),
            server_type: server_type.into(),
            pid,
        }
    }
}

/// Whether and how often to profile, from code or from the variables
/// NeMo-Gym 0.7.0 reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryProfilerConfig {
    /// Whether to profile at all (default `false`).
    pub enabled: bool,
    /// Time between samples (default 1 s).
    pub interval: Duration,
}

impl Default for MemoryProfilerConfig {
    fn default() -> Self {
        MemoryProfilerConfig {
            enabled: false,
            interval: Duration::from_secs(1),
        }
    }
}

impl MemoryProfilerConfig {
    /// Reads [`ENABLED_VARIABLE`] and [`INTERVAL_VARIABLE`] from the process
    /// environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&EnvLookup::process())
    }

    /// Reads the variables from `env`; a value that is not a switch, or,
    /// with profiling on, an interval that is not a number of seconds of at
    /// least 0.001, is an error naming the variable. With profiling off the
    /// interval is not read, as for the OTLP variables with another
    /// exporter: a value there cannot stop a job that does not profile.
    ///
    /// ```
    /// use nemo_lens::instruments::gym::MemoryProfilerConfig;
    /// use nemo_lens::telemetry::EnvLookup;
    ///
    /// let env = EnvLookup::from_pairs([
    ///     ("NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED", "1"),
    ///     ("NEMO_GYM_OTEL_MEMORY_PROFILING_INTERVAL_SECONDS", "0.5"),
    /// ]);
    /// let config = MemoryProfilerConfig::from_lookup(&env)?;
    /// assert!(config.enabled);
    /// assert_eq!(config.interval.as_millis(), 500);
    /// # Ok::<(), nemo_lens::ConfigError>(())
    /// ```
    pub fn from_lookup(env: &EnvLookup) -> Result<Self, ConfigError> {
        let mut config = MemoryProfilerConfig::default();
        if let Some(value) = env.get(ENABLED_VARIABLE) {
            config.enabled = match value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(ConfigError::new(
                        ENABLED_VARIABLE,
                        value,
                        "1, true, yes or on to profile; 0, false, no or off not to",
                    ))
                }
            };
        }
        if !config.enabled {
            return Ok(config);
        }
        if let Some(value) = env.get(INTERVAL_VARIABLE) {
            let seconds: Option<f64> = value.trim().parse().ok();
            config.interval = seconds
                .filter(|s| s.is_finite() && *s > 0.0)
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .filter(|interval| *interval >= MemoryProfiler::MIN_INTERVAL)
                .ok_or_else(|| {
                    ConfigError::new(
                        INTERVAL_VARIABLE,
                        value,
                        "a number of seconds, at least 0.001",
                    )
                })?;
        }
        Ok(config)
    }
}

/// Samples the memory of Gym servers' process trees and of the host on a
/// thread of its own: once at start, every interval, and once more at stop.
///
/// Per server it records `gym.server.memory.usage` and
/// `gym.server.memory.sampled_peak` (RSS, and PSS where the kernel gives it
/// for every process of the tree), and `gym.server.processes`; for the host,
/// `gym.host.memory.*`. A server whose tree has exited reports 0 processes
/// from then on (its memory gauges keep the last values sampled, as a
/// gauge does). Off Linux, process trees cannot be read: the profiler says
/// so once and records host memory only. On a meter that records nothing,
/// no thread is started.
///
/// ```
/// use nemo_lens::instruments::gym::{GymServer, MemoryProfiler, MemoryProfilerConfig};
/// use nemo_lens::Meter;
///
/// # let meter = Meter::noop();
/// let servers = [GymServer::new("math_env", "resources_servers", std::process::id())];
/// // As NeMo-Gym does: only when NEMO_GYM_OTEL_MEMORY_PROFILING_ENABLED says so.
/// let profiler = MemoryProfiler::from_env(&meter, servers)?;
/// // ... serve ...
/// if let Some(profiler) = profiler {
///     profiler.stop(); // one last sample
/// }
/// # Ok::<(), nemo_lens::ConfigError>(())
/// ```
#[derive(Debug)]
#[must_use = "the profiler stops when dropped"]
pub struct MemoryProfiler {
    thread: SamplingThread,
}

impl MemoryProfiler {
    /// The shortest interval, 1 ms: reading every tree's `/proc` files more
    /// often would be a busy loop.
    pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

    /// Starts profiling `servers` when [`MemoryProfilerConfig::from_env`]
    /// says so, at its interval; `None` when it is off.
    pub fn from_env(
        meter: &Meter,
        servers: impl IntoIterator<Item = GymServer>,
    ) -> Result<Option<Self>, ConfigError> {
        let config = MemoryProfilerConfig::from_env()?;
        Ok(config
            .enabled
            .then(|| Self::start(meter, servers, config.interval)))
    }

    /// Starts profiling `servers` every `interval` (at least
    /// [`MIN_INTERVAL`](Self::MIN_INTERVAL)), with a first sample taken
    /// before this returns.
    pub fn start(
        meter: &Meter,
        servers: impl IntoIterator<Item = GymServer>,
        interval: Duration,
    ) -> Self {
        if !meter.is_enabled() {
            return MemoryProfiler {
                thread: SamplingThread::idle(),
            };
        }
        let mut sampler = Sampler::new(servers.into_iter().collect());
        sampler.sample(meter);
        let meter = meter.clone();
        let thread = SamplingThread::spawn(
            "nemo-gym-memory",
            "memory profiler",
            interval.max(Self::MIN_INTERVAL),
            true,
            move || sampler,
            move |sampler| sampler.sample(&meter),
        );
        MemoryProfiler { thread }
    }

    /// Whether a sampling thread is running.
    pub fn is_running(&self) -> bool {
        self.thread.is_running()
    }

    /// Takes the last sample and stops.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

/// What the sampling thread keeps between samples: the servers and the
/// peaks seen so far.
struct Sampler {
    servers: Vec<GymServer>,
    /// Per server (by position) and memory type.
    peaks: HashMap<(usize, MemoryType), u64>,
    host_peak: u64,
}

impl Sampler {
    fn new(servers: Vec<GymServer>) -> Self {
        if !cfg!(target_os = "linux") && !servers.is_empty() {
            nemo_lens_core::__internal::warnings::emit(
                nemo_lens_core::__internal::warnings::Warning::Sampler,
                || {
                    tracing::warn!(
                        target: "nemo_lens",
                        "process-tree memory is only read on Linux: the memory profiler records host \
                         memory only"
                    );
                },
            );
        }
        Sampler {
            servers,
            peaks: HashMap::new(),
            host_peak: 0,
        }
    }

    fn sample(&mut self, meter: &Meter) {
        // Off Linux a tree cannot be read: no server gauges at all, rather
        // than trees that look empty.
        if cfg!(target_os = "linux") {
            for index in 0..self.servers.len() {
                self.sample_server(index, meter);
            }
        }
        if let Some(host) = host::read() {
            let usage = host.usage();
            self.host_peak = self.host_peak.max(usage);
            HostMemoryMetrics::default()
                .usage(usage)
                .available(host.available)
                .total(host.total)
                .sampled_peak(self.host_peak)
                .record(meter);
        }
    }

    fn sample_server(&mut self, index: usize, meter: &Meter) {
        let server = &self.servers[index];
        let labelled = ServerMemoryMetrics::default()
            .server_name(server.name.clone())
            .server_type(server.server_type.clone())
            .pid(i64::from(server.pid));
        let Some(usage) = tree_usage(server.pid) else {
            labelled.processes(0).record(meter);
            return;
        };
        labelled.clone().processes(usage.processes).record(meter);
        let readings = [
            (MemoryType::Rss, Some(usage.rss)),
            (MemoryType::Pss, usage.pss),
        ];
        for (memory_type, bytes) in readings {
            let Some(bytes) = bytes else { continue };
            let peak = self.peaks.entry((index, memory_type)).or_default();
            *peak = (*peak).max(bytes);
            labelled
                .clone()
                .memory_type(memory_type)
                .usage(bytes)
                .sampled_peak(*peak)
                .record(meter);
        }
    }
}

/// What a tree uses, summed over its processes.
struct Usage {
    processes: u64,
    rss: u64,
    pss: Option<u64>,
}

#[cfg(target_os = "linux")]
fn tree_usage(root: u32) -> Option<Usage> {
    process_tree::usage(root).map(|tree| Usage {
        processes: tree.processes,
        rss: tree.rss,
        pss: tree.pss,
    })
}

#[cfg(not(target_os = "linux"))]
fn tree_usage(_root: u32) -> Option<Usage> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<MemoryProfilerConfig, ConfigError> {
        MemoryProfilerConfig::from_lookup(&EnvLookup::from_pairs(pairs.iter().copied()))
    }

    #[test]
    fn off_by_default_every_second_when_on() {
        assert_eq!(config(&[]).unwrap(), MemoryProfilerConfig::default());
        let on = config(&[(ENABLED_VARIABLE, "true")]).unwrap();
        assert!(on.enabled);
        assert_eq!(on.interval, Duration::from_secs(1));
        let fast = config(&[(ENABLED_VARIABLE, "1"), (INTERVAL_VARIABLE, "0.25")]).unwrap();
        assert_eq!(fast.interval, Duration::from_millis(250));
    }

    #[test]
    fn bad_values_are_errors_that_name_the_variable() {
        for interval in ["0", "-1", "soon", "inf", "NaN", "1e-12"] {
            let error =
                config(&[(ENABLED_VARIABLE, "on"), (INTERVAL_VARIABLE, interval)]).unwrap_err();
            assert_eq!(error.variable, INTERVAL_VARIABLE, "{interval}");
            assert_eq!(error.value, interval);
        }
        let error = config(&[(ENABLED_VARIABLE, "maybe")]).unwrap_err();
        assert_eq!(error.variable, ENABLED_VARIABLE);
        assert!(error.to_string().contains("maybe"), "{error}");
    }

    #[test]
    fn the_interval_is_read_only_when_profiling_is_on() {
        for enabled in [None, Some("0"), Some("off")] {
            let mut pairs = vec![(INTERVAL_VARIABLE, "fast")];
            pairs.extend(enabled.map(|value| (ENABLED_VARIABLE, value)));
            let off = config(&pairs).unwrap();
            assert_eq!(off, MemoryProfilerConfig::default(), "{enabled:?}");
        }
    }
}
