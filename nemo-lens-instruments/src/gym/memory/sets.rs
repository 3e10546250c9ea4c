//! The memory gauges of NeMo-Gym 0.7.0's memory profiler (`memory.py`).

use nemo_lens_macros::Instruments;
use opentelemetry::StringValue;

use super::super::values::MemoryType;

/// One Gym server's process tree (the root Gym spawned and its
/// descendants), as the [`MemoryProfiler`](super::MemoryProfiler) samples
/// it: memory by type, its sampled peak, and the process count.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct ServerMemoryMetrics {
    /// Current memory used by a Gym server and its descendants.
    #[gauge("gym.server.memory.usage", unit = "By")]
    pub usage: Option<u64>,

    /// Largest sampled memory usage for a Gym server and its descendants.
    #[gauge("gym.server.memory.sampled_peak", unit = "By")]
    pub sampled_peak: Option<u64>,

    /// Processes currently attributed to a Gym server.
    #[gauge("gym.server.processes", unit = "{process}")]
    pub processes: Option<u64>,

    /// The server's name (`nemo.gym.server.name`).
    #[attribute("nemo.gym.server.name")]
    pub server_name: Option<StringValue>,

    /// The server's type (`nemo.gym.server.type`).
    #[attribute("nemo.gym.server.type")]
    pub server_type: Option<StringValue>,

    /// The root process of the tree (`process.pid`).
    #[attribute("process.pid")]
    pub pid: Option<i64>,

    /// Which memory (`memory.type`): `rss`, or `pss` where the kernel gives
    /// it for every process of the tree.
    #[attribute("memory.type", only(usage, sampled_peak))]
    pub memory_type: Option<MemoryType>,
}

/// The host's memory, as the [`MemoryProfiler`](super::MemoryProfiler)
/// samples it.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct HostMemoryMetrics {
    /// Current host memory in use.
    #[gauge("gym.host.memory.usage", unit = "By")]
    pub usage: Option<u64>,

    /// Current host memory available without swapping.
    #[gauge("gym.host.memory.available", unit = "By")]
    pub available: Option<u64>,

    /// Total host memory.
    #[gauge("gym.host.memory.total", unit = "By")]
    pub total: Option<u64>,

    /// Largest sampled host memory usage.
    #[gauge("gym.host.memory.sampled_peak", unit = "By")]
    pub sampled_peak: Option<u64>,
}
