//! Which GPUs a process may use: `CUDA_VISIBLE_DEVICES` read as CUDA reads
//! it, so that `host.gpu.count` and any per-GPU gauge name the same GPUs.
//!
//! Unset means every GPU; set but empty, none. Otherwise a comma-separated
//! list of GPU indices (`0,2`) or UUIDs (`GPU-8e2f…`, or a prefix of one that
//! names a single GPU), in the order given. As in CUDA, the list ends at the
//! first entry that names no GPU (a negative or unknown index, an unknown or
//! ambiguous UUID, a GPU already named, an empty entry, a `MIG-` device).

/// One GPU as the driver lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuId<'a> {
    /// The driver's index (NVML, `nvidia-smi -L`).
    pub index: u32,
    /// The driver's UUID, `GPU-…`.
    pub uuid: &'a str,
}

/// The positions in `devices` of the GPUs `cuda_visible_devices` (the
/// variable's value, `None` when unset) makes visible, in CUDA's order.
///
/// ```
/// use nemo_lens::telemetry::{visible_gpus, GpuId};
///
/// let gpus = [
///     GpuId { index: 0, uuid: "GPU-8e2f0a11-aaaa" },
///     GpuId { index: 1, uuid: "GPU-1b7c9d22-bbbb" },
/// ];
/// assert_eq!(visible_gpus(None, &gpus), [0, 1]);
/// assert_eq!(visible_gpus(Some(""), &gpus), Vec::<usize>::new());
/// assert_eq!(visible_gpus(Some("1"), &gpus), [1]);
/// assert_eq!(visible_gpus(Some("GPU-1b7c,0"), &gpus), [1, 0]);
/// assert_eq!(visible_gpus(Some("0,7,1"), &gpus), [0], "the list ends at GPU 7");
/// ```
pub fn visible_gpus(cuda_visible_devices: Option<&str>, devices: &[GpuId<'_>]) -> Vec<usize> {
    let Some(value) = cuda_visible_devices else {
        return (0..devices.len()).collect();
    };
    let mut visible = Vec::new();
    for entry in value.split(',').map(str::trim) {
        let Some(found) = find(entry, devices) else {
            break;
        };
        if visible.contains(&found) {
            break;
        }
        visible.push(found);
    }
    visible
}

/// How many GPUs `cuda_visible_devices` names, for when the driver cannot
/// be asked: the leading entries that could name one.
pub fn named_count(cuda_visible_devices: &str) -> usize {
    let mut named: Vec<&str> = Vec::new();
    for entry in cuda_visible_devices.split(',').map(str::trim) {
        let could_be = entry.parse::<u32>().is_ok() || is_uuid(entry);
        if !could_be || named.contains(&entry) {
            break;
        }
        named.push(entry);
    }
    named.len()
}

fn find(entry: &str, devices: &[GpuId<'_>]) -> Option<usize> {
    if let Ok(index) = entry.parse::<u32>() {
        return devices.iter().position(|d| d.index == index);
    }
    if !is_uuid(entry) {
        return None;
    }
    let mut matching = devices
        .iter()
        .enumerate()
        .filter(|(_, d)| d.uuid.starts_with(entry));
    match (matching.next(), matching.next()) {
        (Some((position, _)), None) => Some(position),
        // None, or a prefix of two UUIDs.
        _ => None,
    }
}

fn is_uuid(entry: &str) -> bool {
    entry.len() > "GPU-".len() && entry.starts_with("GPU-")
}

#[cfg(test)]
mod tests {
    use super::*;

    const EIGHT: [GpuId<'static>; 8] = [
        GpuId {
            index: 0,
            uuid: "GPU-00aa-0000",
        },
        GpuId {
            index: 1,
            uuid: "GPU-11bb-1111",
        },
        GpuId {
            index: 2,
            uuid: "GPU-22cc-2222",
        },
        GpuId {
            index: 3,
            uuid: "GPU-33dd-3333",
        },
        GpuId {
            index: 4,
            uuid: "GPU-44ee-4444",
        },
        GpuId {
            index: 5,
            uuid: "GPU-55ff-5555",
        },
        GpuId {
            index: 6,
            uuid: "GPU-66aa-6666",
        },
        GpuId {
            index: 7,
            uuid: "GPU-6677-7777",
        },
    ];

    fn visible(value: Option<&str>) -> Vec<usize> {
        visible_gpus(value, &EIGHT)
    }

    #[test]
    fn unset_is_every_gpu_and_empty_is_none() {
        assert_eq!(visible(None), (0..8).collect::<Vec<_>>());
        assert_eq!(visible(Some("")), Vec::<usize>::new());
        assert_eq!(visible(Some("  ")), Vec::<usize>::new());
        assert_eq!(named_count(""), 0);
    }

    #[test]
    fn each_rank_of_an_eight_gpu_node_sees_its_own() {
        for rank in 0..8 {
            assert_eq!(visible(Some(&rank.to_string())), [rank]);
        }
        assert_eq!(visible(Some("3, 1")), [3, 1], "in the order given");
    }

    #[test]
    fn uuids_and_unique_prefixes_name_gpus() {
        assert_eq!(visible(Some("GPU-22cc-2222")), [2]);
        assert_eq!(visible(Some("GPU-22")), [2]);
        assert_eq!(visible(Some("GPU-33dd,GPU-0")), [3, 0]);
    }

    #[test]
    fn the_list_ends_at_the_first_entry_that_names_no_gpu() {
        assert_eq!(visible(Some("0,-1,1")), [0]);
        assert_eq!(visible(Some("1,9,2")), [1], "no GPU 9");
        assert_eq!(visible(Some("GPU-66,1")), Vec::<usize>::new(), "two UUIDs");
        assert_eq!(
            visible(Some("GPU-zz,1")),
            Vec::<usize>::new(),
            "no such UUID"
        );
        assert_eq!(visible(Some("2,2,3")), [2], "named twice");
        assert_eq!(visible(Some("0,,1")), [0], "empty entry");
        assert_eq!(visible(Some("MIG-abc,0")), Vec::<usize>::new());
        assert_eq!(visible(Some("GPU-")), Vec::<usize>::new());
    }

    #[test]
    fn without_the_driver_the_names_are_counted_as_cuda_would_read_them() {
        assert_eq!(named_count("0,1,2"), 3);
        assert_eq!(named_count("0,-1,1"), 1);
        assert_eq!(named_count("GPU-8e2f,3"), 2);
        assert_eq!(named_count("1,1"), 1);
        assert_eq!(named_count("MIG-x"), 0);
    }
}
