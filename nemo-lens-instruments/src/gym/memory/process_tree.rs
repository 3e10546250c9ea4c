//! A process tree's memory, read from `/proc` as NeMo-Gym 0.7.0 reads it:
//! descendants through `/proc/<pid>/task/*/children`, RSS and PSS from
//! `smaps_rollup`, else RSS from `statm` (and then no PSS for the tree).

use std::collections::HashSet;
use std::fs;

/// What one tree uses, summed over its processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeUsage {
    pub processes: u64,
    pub rss: u64,
    /// `None` when some process of the tree had no `smaps_rollup`.
    pub pss: Option<u64>,
}

/// `root` and every descendant alive now; empty when `root` is gone. A
/// process that exits while it is read is skipped.
pub(crate) fn tree(root: u32) -> Vec<u32> {
    if fs::metadata(format!("/proc/{root}")).is_err() {
        return Vec::new();
    }
    let mut seen = HashSet::from([root]);
    let mut order = vec![root];
    let mut next = 0;
    while let Some(&pid) = order.get(next) {
        next += 1;
        for child in children(pid) {
            // A pid reused inside the walk must not loop it.
            if seen.insert(child) {
                order.push(child);
            }
        }
    }
    order
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|listed| {
            listed
                .split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The memory of `root`'s tree; `None` when `root` is gone.
pub(crate) fn usage(root: u32) -> Option<TreeUsage> {
    let pids = tree(root);
    if pids.is_empty() {
        return None;
    }
    let mut total = TreeUsage {
        processes: 0,
        rss: 0,
        pss: Some(0),
    };
    for pid in pids {
        let Some((rss, pss)) = process_usage(pid) else {
            continue;
        };
        total.processes += 1;
        total.rss += rss;
        total.pss = total.pss.zip(pss).map(|(sum, pss)| sum + pss);
    }
    (total.processes > 0).then_some(total)
}

/// RSS and PSS of one process in bytes.
fn process_usage(pid: u32) -> Option<(u64, Option<u64>)> {
    if let Ok(rollup) = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        && let (Some(rss), pss) = (kb_field(&rollup, "Rss:"), kb_field(&rollup, "Pss:"))
    {
        return Some((rss, pss));
    }
    let statm = fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let resident: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some((resident * page_size(), None))
}

/// The value of a `Name:   1234 kB` line, in bytes.
pub(crate) fn kb_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the running system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kb_fields_are_read_in_bytes() {
        let rollup = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:  1536 kB\nPss:   512 kB\n";
        assert_eq!(kb_field(rollup, "Rss:"), Some(1536 * 1024));
        assert_eq!(kb_field(rollup, "Pss:"), Some(512 * 1024));
        assert_eq!(kb_field(rollup, "Swap:"), None);
    }

    #[test]
    fn this_process_is_a_tree_of_its_own() {
        let me = std::process::id();
        assert_eq!(tree(me).first(), Some(&me));
        let usage = usage(me).expect("alive");
        assert!(usage.processes >= 1 && usage.rss > 0, "{usage:?}");
    }

    #[test]
    fn a_gone_root_has_no_tree() {
        // Beyond pid_max, never a process.
        assert!(tree(u32::MAX).is_empty());
        assert_eq!(usage(u32::MAX), None);
    }
}
