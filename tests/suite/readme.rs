//! The guide's table of built-in instruments (`src/guides/builtin_sets.md`)
//! is generated knowledge: check it against the descriptors so it cannot
//! drift from the code.

use nemo_lens::instruments::gym::unreleased::{
    GpuMetrics, HttpMetrics, ModelServerCallMetrics, ProcessCpuMetrics, QueueMetrics,
    RolloutMetrics,
};
use nemo_lens::instruments::gym::{
    ConnectionPoolConnects, ConnectionPoolQueue, GymMetrics, HostMemoryMetrics, SandboxMetrics,
    ServerMemoryMetrics,
};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::serving::SchedulingMetrics;
use nemo_lens::instruments::{InferenceMetrics, ModelCallMetrics};
use nemo_lens::{Instruments, SemconvGate, SemconvOptIn};

#[test]
fn the_built_in_table_lists_every_measurement() {
    let readme = include_str!("../../src/guides/builtin_sets.md");
    let rows: Vec<Vec<String>> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter(|l| l.split('|').count() == 8)
        .map(|l| {
            l.split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect()
        })
        .collect();
    let descriptors = [
        InferenceMetrics::DESCRIPTORS,
        ModelCallMetrics::DESCRIPTORS,
        SchedulingMetrics::DESCRIPTORS,
        RlMetrics::DESCRIPTORS,
        GymMetrics::DESCRIPTORS,
        SandboxMetrics::DESCRIPTORS,
        ConnectionPoolQueue::DESCRIPTORS,
        ConnectionPoolConnects::DESCRIPTORS,
        ServerMemoryMetrics::DESCRIPTORS,
        HostMemoryMetrics::DESCRIPTORS,
        QueueMetrics::DESCRIPTORS,
        RolloutMetrics::DESCRIPTORS,
        ModelServerCallMetrics::DESCRIPTORS,
        HttpMetrics::DESCRIPTORS,
        ProcessCpuMetrics::DESCRIPTORS,
        GpuMetrics::DESCRIPTORS,
    ]
    .concat();
    // The first table lists the default names, the second what the GenAI
    // draft's opt-in adds.
    let descriptors: Vec<_> = descriptors
        .iter()
        .filter(|d| d.semconv.is_open(&SemconvOptIn::none()))
        .chain(
            descriptors
                .iter()
                .filter(|d| matches!(d.semconv, SemconvGate::OptIn(_))),
        )
        .collect();
    assert_eq!(
        rows.len(),
        descriptors.len(),
        "one table row per measurement"
    );
    for (row, d) in rows.iter().zip(descriptors) {
        assert_eq!(row[1], d.field);
        assert_eq!(row[2], d.name, "{}", d.field);
        assert_eq!(row[3], d.kind.as_str(), "{}", d.field);
        assert_eq!(row[4], d.unit, "{}", d.field);
        assert_eq!(row[5], d.description, "{}", d.field);
    }
}
