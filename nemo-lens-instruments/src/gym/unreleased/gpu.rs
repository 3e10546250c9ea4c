//! Per-GPU readings for the sampler through NVML, when the `nvml` feature is
//! on and the NVIDIA library loads; nothing otherwise.

use std::sync::Once;

use nemo_lens_core::config::{visible_gpus, GpuId};

use super::attributed::GpuMetrics;

/// Why there are no GPU gauges, said once per process at debug level: a
/// machine without GPUs is normal, not a problem to repeat.
fn say_absent(why: &dyn std::fmt::Display) {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        tracing::debug!(target: "nemo_lens", "{why}: GPU gauges are not recorded");
    });
}

/// The GPUs of `listed` (index and UUID, as the driver lists them) that
/// `CUDA_VISIBLE_DEVICES` makes visible to this process, as `host.gpu.count`
/// counts them: each rank of a node reports its own GPUs, and none when the
/// variable is set but empty.
#[cfg_attr(not(feature = "nvml"), allow(dead_code))]
pub(crate) fn visible(listed: Vec<(u32, String)>) -> Vec<(u32, String)> {
    let env = nemo_lens_core::config::EnvLookup::process();
    select(env.get_raw("CUDA_VISIBLE_DEVICES").as_deref(), listed)
}

fn select(cuda_visible_devices: Option<&str>, listed: Vec<(u32, String)>) -> Vec<(u32, String)> {
    let ids: Vec<GpuId<'_>> = listed
        .iter()
        .map(|(index, uuid)| GpuId {
            index: *index,
            uuid,
        })
        .collect();
    let chosen = visible_gpus(cuda_visible_devices, &ids);
    chosen.into_iter().map(|at| listed[at].clone()).collect()
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
            let listed: Vec<(u32, String)> = (0..count)
                .filter_map(|index| {
                    let uuid = nvml.device_by_index(index).ok()?.uuid().ok()?;
                    Some((index, uuid))
                })
                .collect();
            let devices = super::visible(listed);
            if devices.is_empty() {
                super::say_absent(&"NVML sees no GPU that CUDA_VISIBLE_DEVICES makes visible");
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

#[cfg(test)]
mod tests {
    use super::select;

    fn node() -> Vec<(u32, String)> {
        (0..8)
            .map(|i| (i, format!("GPU-{i}{i}{i}{i}-uuid")))
            .collect()
    }

    #[test]
    fn a_rank_samples_only_the_gpus_it_is_given() {
        let indices =
            |value| -> Vec<u32> { select(value, node()).into_iter().map(|(i, _)| i).collect() };
        assert_eq!(indices(None), (0..8).collect::<Vec<_>>(), "unset: all");
        assert_eq!(indices(Some("")), Vec::<u32>::new(), "empty: none");
        assert_eq!(indices(Some("5")), [5]);
        assert_eq!(indices(Some("GPU-3333")), [3]);
        assert_eq!(indices(Some("6,GPU-7777-uuid")), [6, 7]);
    }
}
