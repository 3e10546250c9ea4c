//! Per-GPU readings for the sampler through NVML, when the `nvml` feature is
//! on and the NVIDIA library loads; nothing otherwise.

use std::sync::Once;

use super::attributed::GpuMetrics;

/// Why there are no GPU gauges, said once per process at debug level: a
/// machine without GPUs is normal, not a problem to repeat.
fn say_absent(why: &dyn std::fmt::Display) {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        tracing::debug!(target: "nemo_lens", "{why}: GPU gauges are not recorded");
    });
}

#[cfg(feature = "nvml")]
pub(crate) use with_nvml::Gpus;

#[cfg(not(feature = "nvml"))]
pub(crate) use without_nvml::Gpus;

#[cfg(feature = "nvml")]
mod with_nvml {
    use nvml_wrapper::Nvml;

    use super::GpuMetrics;

    const MIB: f64 = 1024.0 * 1024.0;

    /// The NVML library and the GPUs it saw when the sampler started.
    pub(crate) struct Gpus {
        nvml: Nvml,
        /// Index and UUID of each GPU.
        devices: Vec<(u32, String)>,
    }

    impl Gpus {
        /// The GPUs, or `None` (with one debug line) when NVML does not load
        /// or sees none.
        pub fn open() -> Option<Gpus> {
            let nvml = match Nvml::init() {
                Ok(nvml) => nvml,
                Err(error) => {
                    super::say_absent(&format_args!("NVML is not available ({error})"));
                    return None;
                }
            };
            let count = nvml.device_count().unwrap_or(0);
            let devices: Vec<(u32, String)> = (0..count)
                .filter_map(|index| {
                    let uuid = nvml.device_by_index(index).ok()?.uuid().ok()?;
                    Some((index, uuid))
                })
                .collect();
            if devices.is_empty() {
                super::say_absent(&"NVML sees no GPU");
                return None;
            }
            Some(Gpus { nvml, devices })
        }

        /// One reading per GPU that answers; a GPU that does not is skipped
        /// this time.
        pub fn sample(&self) -> Vec<GpuMetrics> {
            self.devices
                .iter()
                .filter_map(|(index, uuid)| {
                    let device = self.nvml.device_by_index(*index).ok()?;
                    let utilization = device.utilization_rates().ok()?;
                    let memory = device.memory_info().ok()?;
                    Some(
                        GpuMetrics::default()
                            .index(i64::from(*index))
                            .uuid(uuid.clone())
                            .utilization_percent(f64::from(utilization.gpu))
                            .memory_used_mib(memory.used as f64 / MIB)
                            .memory_total_mib(memory.total as f64 / MIB),
                    )
                })
                .collect()
        }
    }
}

#[cfg(not(feature = "nvml"))]
mod without_nvml {
    use super::GpuMetrics;

    /// Built without the `nvml` feature: never any GPU.
    pub(crate) enum Gpus {}

    impl Gpus {
        pub fn open() -> Option<Gpus> {
            super::say_absent(&"built without the `nvml` feature");
            None
        }

        pub fn sample(&self) -> Vec<GpuMetrics> {
            match *self {}
        }
    }
}
