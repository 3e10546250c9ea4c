//! `nemo.run.id`: one id for every rank of a job, without configuration
//! where the launcher already names the job.

use std::sync::atomic::{AtomicBool, Ordering};

use nemo_lens_core::__internal::warnings::{self, Warning};

use super::config::NemoLensConfig;
use super::env::EnvLookup;

/// The variables that name the job every rank belongs to, in the order they
/// are read after `NEMO_LENS_RUN_ID`: torchrun's rendezvous id (`none` when
/// it was not given one), Slurm's job, the PMIx namespace (Open MPI 5,
/// PRRTE, Slurm with PMIx), PBS's and LSF's jobs.
pub const JOB_ID_VARIABLES: [&str; 5] = [
    "TORCHELASTIC_RUN_ID",
    "SLURM_JOB_ID",
    "PMIX_NAMESPACE",
    "PBS_JOBID",
    "LSB_JOBID",
];

/// The run id and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunId {
    pub id: String,
    pub source: RunIdSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunIdSource {
    /// `NEMO_LENS_RUN_ID` (under the configuration's prefix).
    Configured,
    /// One of [`JOB_ID_VARIABLES`].
    Launcher(&'static str),
    /// Drawn by this process: no other rank shares it.
    Random,
}

/// The configured run id, else the launcher's job identity, else 12 random
/// hex digits.
pub(crate) fn resolve(config: &NemoLensConfig, env: &EnvLookup) -> RunId {
    if let Some(id) = &config.run_id {
        return RunId {
            id: id.clone(),
            source: RunIdSource::Configured,
        };
    }
    for variable in JOB_ID_VARIABLES {
        // torchrun without --rdzv-id passes the literal default.
        if let Some(id) = env.get(variable).filter(|id| id != "none") {
            return RunId {
                id,
                source: RunIdSource::Launcher(variable),
            };
        }
    }
    RunId {
        id: random_hex_12(),
        source: RunIdSource::Random,
    }
}

static WARNED: AtomicBool = AtomicBool::new(false);

/// Says once per process that a rank of a multi-rank job drew its own run
/// id, so its series will not join the other ranks' on a dashboard that
/// filters on `nemo_run_id`.
pub(crate) fn warn_if_alone(config: &NemoLensConfig, run_id: &RunId, rank: u32, world_size: u32) {
    if run_id.source != RunIdSource::Random || world_size < 2 {
        return;
    }
    if WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    let message = random_run_id_message(config, &run_id.id, rank, world_size);
    warnings::emit(Warning::Setting, || {
        tracing::warn!(target: "nemo_lens", "{message}");
    });
}

fn random_run_id_message(config: &NemoLensConfig, id: &str, rank: u32, world_size: u32) -> String {
    format!(
        "rank {rank} of {world_size} drew its own random run id {id}: every rank draws a \
         different one, so dashboards filtering on nemo_run_id show one rank at a time; set \
         {}_RUN_ID to the same value on every rank (none of {} is set)",
        config.prefix,
        JOB_ID_VARIABLES.join(", ")
    )
}

fn random_hex_12() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: the clock and pid still tell runs apart.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mixed = nanos ^ (u128::from(std::process::id()) << 64);
        bytes.copy_from_slice(&mixed.to_le_bytes()[..6]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(pairs: &[(&str, &str)]) -> RunId {
        let env = EnvLookup::from_pairs(pairs.iter().copied());
        resolve(&NemoLensConfig::from_lookup(env.clone()).unwrap(), &env)
    }

    #[test]
    fn the_configured_id_then_the_launchers_job_then_random() {
        let torchrun = ("TORCHELASTIC_RUN_ID", "a1b2c3");
        let slurm = ("SLURM_JOB_ID", "98765");
        assert_eq!(
            resolved(&[("NEMO_LENS_RUN_ID", "run7"), torchrun, slurm]),
            RunId {
                id: "run7".into(),
                source: RunIdSource::Configured
            }
        );
        assert_eq!(
            resolved(&[torchrun, slurm]),
            RunId {
                id: "a1b2c3".into(),
                source: RunIdSource::Launcher("TORCHELASTIC_RUN_ID")
            }
        );
        // torchrun's default rendezvous id names no job.
        assert_eq!(
            resolved(&[("TORCHELASTIC_RUN_ID", "none"), slurm]),
            RunId {
                id: "98765".into(),
                source: RunIdSource::Launcher("SLURM_JOB_ID")
            }
        );
        for variable in ["PMIX_NAMESPACE", "PBS_JOBID", "LSB_JOBID"] {
            assert_eq!(
                resolved(&[(variable, "job-4")]).source,
                RunIdSource::Launcher(variable)
            );
        }
        let random = resolved(&[("TORCHELASTIC_RUN_ID", "none")]);
        assert_eq!(random.source, RunIdSource::Random);
        assert_eq!(random.id.len(), 12);
        assert!(
            random.id.chars().all(|c| c.is_ascii_hexdigit()),
            "{random:?}"
        );
    }

    #[test]
    fn the_warning_names_the_variable_to_set_and_the_ones_read() {
        let env = EnvLookup::from_pairs([("X", "1")]);
        let config = NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", None).unwrap();
        assert_eq!(
            random_run_id_message(&config, "c5ea506dc091", 2, 4),
            "rank 2 of 4 drew its own random run id c5ea506dc091: every rank draws a different \
             one, so dashboards filtering on nemo_run_id show one rank at a time; set \
             MEGATRON_OTEL_RUN_ID to the same value on every rank (none of TORCHELASTIC_RUN_ID, \
             SLURM_JOB_ID, PMIX_NAMESPACE, PBS_JOBID, LSB_JOBID is set)"
        );
    }
}
