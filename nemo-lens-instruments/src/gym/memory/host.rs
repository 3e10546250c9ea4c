//! The host's memory: total and available without swapping, as
//! `psutil.virtual_memory()` gives them to NeMo-Gym (`MemAvailable` of
//! `/proc/meminfo` on Linux).

/// Host memory in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostMemory {
    pub total: u64,
    pub available: u64,
}

impl HostMemory {
    /// In use: total minus available.
    pub fn usage(&self) -> u64 {
        self.total.saturating_sub(self.available)
    }
}

#[cfg(target_os = "linux")]
pub(crate) fn read() -> Option<HostMemory> {
    use super::process_tree::kb_field;
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    Some(HostMemory {
        total: kb_field(&meminfo, "MemTotal:")?,
        available: kb_field(&meminfo, "MemAvailable:")?,
    })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn read() -> Option<HostMemory> {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    Some(HostMemory {
        total: system.total_memory(),
        available: system.available_memory(),
    })
}
