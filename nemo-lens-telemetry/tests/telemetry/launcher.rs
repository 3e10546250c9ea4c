//! Setup from the launcher's variables: the rank and world size on the
//! resource, one run id per job, the local rank deciding
//! `first_rank_per_node` and the port, and the warning about a run id no
//! other rank shares.

use crate::setup::{options, SharedReader};
use crate::support::messages::Messages;
use crate::support::{exclusive, Exclusive};

use nemo_lens::telemetry::{EnvLookup, JobRank, Launcher, NemoLensConfig, SetupError};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::ManualReader;

fn serial() -> Exclusive {
    exclusive()
}

fn config(pairs: &[(&str, &str)]) -> NemoLensConfig {
    let mut all = vec![
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORT_STRATEGY", "all_ranks"),
    ];
    all.extend_from_slice(pairs);
    NemoLensConfig::from_lookup(EnvLookup::from_pairs(all)).unwrap()
}

/// The resource a reader sees after setting up from the launcher in `env`.
fn resource_from(env: &[(&str, &str)]) -> ResourceMetrics {
    let reader = std::sync::Arc::new(ManualReader::default());
    let handle = options(env)
        .metric_reader(SharedReader(reader.clone()))
        .setup_from_launcher(&config(&[]))
        .unwrap();
    let counter = handle.meter.otel().u64_counter("steps").build();
    counter.add(1, &[]);
    let mut rm = ResourceMetrics::default();
    reader.collect(&mut rm).unwrap();
    rm
}

fn attribute(rm: &ResourceMetrics, key: &'static str) -> Option<Value> {
    rm.resource().get(&Key::from_static_str(key))
}

#[test]
fn torchrun_slurm_and_mpi_ranks_reach_the_resource_with_the_jobs_run_id() {
    let _serial = serial();
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[
                ("RANK", "2"),
                ("WORLD_SIZE", "4"),
                ("LOCAL_RANK", "2"),
                ("TORCHELASTIC_RUN_ID", "0f6c2a"),
            ],
            "0f6c2a",
        ),
        (
            &[
                ("SLURM_PROCID", "2"),
                ("SLURM_NTASKS", "4"),
                ("SLURM_LOCALID", "0"),
                ("SLURM_JOB_ID", "81234"),
            ],
            "81234",
        ),
        (
            &[
                ("OMPI_COMM_WORLD_RANK", "2"),
                ("OMPI_COMM_WORLD_SIZE", "4"),
                ("PMIX_NAMESPACE", "prterun-node7-4242@1"),
            ],
            "prterun-node7-4242@1",
        ),
    ];
    for (env, run_id) in cases {
        let rm = resource_from(env);
        assert_eq!(attribute(&rm, "dl.rank"), Some(Value::I64(2)), "{env:?}");
        assert_eq!(
            attribute(&rm, "dl.world_size"),
            Some(Value::I64(4)),
            "{env:?}"
        );
        assert_eq!(
            attribute(&rm, "nemo.run.id"),
            Some(run_id.into()),
            "{env:?}"
        );
        assert_eq!(
            attribute(&rm, "service.instance.id"),
            Some(format!("{run_id}-rank2").into()),
            "{env:?}"
        );
    }
}

#[test]
fn no_launcher_is_an_error_naming_the_variables() {
    let _serial = serial();
    let err = options(&[("X", "1")])
        .setup_from_launcher(&config(&[]))
        .unwrap_err();
    assert!(matches!(err, SetupError::Launcher(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("no launcher gave this process a rank: none of RANK/WORLD_SIZE (torchrun), SLURM_PROCID/SLURM_NTASKS (Slurm)"),
        "{message}"
    );
    // A program that also runs by hand falls back to rank 0 of 1.
    let env = EnvLookup::from_pairs([("X", "1")]);
    assert_eq!(
        JobRank::detect(&env).unwrap().unwrap_or(JobRank::SINGLE),
        JobRank::SINGLE
    );
}

#[test]
fn first_rank_per_node_reads_the_slurm_local_id_and_names_it() {
    let _serial = serial();
    let env = [
        ("SLURM_PROCID", "5"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_LOCALID", "1"),
    ];
    let handle = options(&env)
        .setup_from_launcher(&config(&[(
            "NEMO_LENS_EXPORT_STRATEGY",
            "first_rank_per_node",
        )]))
        .unwrap();
    assert!(!handle.is_exporting);
    let why = handle.why_not_exporting().unwrap();
    assert!(
        why.contains(
            "first_rank_per_node selects other ranks (it exports from local rank 0 of each \
             node, and SLURM_LOCALID=1 makes this local rank 1)"
        ),
        "{why}"
    );
    // Explicit ranks read the same local rank.
    let handle = options(&[("SLURM_LOCALID", "0")])
        .setup(
            &config(&[("NEMO_LENS_EXPORT_STRATEGY", "first_rank_per_node")]),
            4,
            8,
        )
        .unwrap();
    assert!(handle.is_exporting);
}

#[cfg(feature = "prometheus")]
#[test]
fn each_local_rank_serves_its_own_port_when_asked() {
    let _serial = serial();
    let env = [
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("LOCAL_RANK", "1"),
        ("TORCHELASTIC_RUN_ID", "ports"),
    ];
    // Local rank 1 serves on the base port + 1, which the tests running
    // beside this one may take between the check and the bind: a few tries.
    for attempt in 1..=3 {
        let base = crate::support::servers::free_ports_in_a_row(2);
        let port = base.to_string();
        let prometheus = config(&[
            ("NEMO_LENS_EXPORTER", "prometheus"),
            ("OTEL_EXPORTER_PROMETHEUS_PORT", port.as_str()),
            ("NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK", "true"),
        ]);
        match options(&env).setup_from_launcher(&prometheus) {
            Ok(handle) => {
                assert_eq!(handle.prometheus_addr().unwrap().port(), base + 1);
                handle.shutdown().unwrap();
                return;
            }
            Err(error) if attempt < 3 && error.to_string().contains("the port is in use") => {}
            Err(error) => panic!("{error}"),
        }
    }
}

#[test]
fn a_random_run_id_on_a_multi_rank_job_is_warned_about_once() {
    // Said once per process: this test needs a process of its own.
    crate::support::own_process!(a_random_run_id_on_a_multi_rank_job_is_warned_about_once);
    let messages = Messages::default();
    tracing::subscriber::with_default(messages.clone(), || {
        for rank in ["0", "1"] {
            let env = [("RANK", rank), ("WORLD_SIZE", "2")];
            let handle = options(&env)
                .push_exporter(opentelemetry_sdk::metrics::InMemoryMetricExporter::default())
                .setup_from_launcher(&config(&[]))
                .unwrap();
            assert!(handle.is_exporting);
        }
        // One rank alone needs no shared id.
        options(&[])
            .push_exporter(opentelemetry_sdk::metrics::InMemoryMetricExporter::default())
            .setup(&config(&[]), 0, 1)
            .unwrap();
    });
    let warned: Vec<String> = messages
        .said()
        .into_iter()
        .filter(|m| m.contains("random run id"))
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("WARN rank 0 of 2 drew its own random run id ")
            && warned[0].contains("set NEMO_LENS_RUN_ID to the same value on every rank"),
        "{warned:?}"
    );
}

#[test]
fn the_launcher_is_named_in_the_job_rank() {
    let env = EnvLookup::from_pairs([("PMI_RANK", "0"), ("PMI_SIZE", "2")]);
    let job = JobRank::from_lookup(&env).unwrap();
    assert_eq!(job.launcher, Some(Launcher::Pmi));
    assert_eq!(
        job.launcher.unwrap().local_rank_variable(),
        "MPI_LOCALRANKID"
    );
}
