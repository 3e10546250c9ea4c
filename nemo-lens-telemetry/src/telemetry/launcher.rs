//! [`JobRank`]: a process's place in its distributed job, read from the
//! variables its launcher (torchrun, Slurm, Open MPI, a PMI launcher) set.

use std::fmt;

use super::env::{parse_number, ConfigError, EnvLookup};

/// The launcher whose variables gave a process its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Launcher {
    /// torchrun (`torch.distributed.run`) and the launchers that set its
    /// variables (DeepSpeed, Accelerate, Lightning): `RANK`, `WORLD_SIZE`,
    /// `LOCAL_RANK`.
    Torchrun,
    /// Slurm's `srun`: `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`.
    Slurm,
    /// Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`,
    /// `OMPI_COMM_WORLD_LOCAL_RANK`.
    OpenMpi,
    /// MPICH's and Intel MPI's Hydra (PMI): `PMI_RANK`, `PMI_SIZE`,
    /// `MPI_LOCALRANKID`.
    Pmi,
}

impl Launcher {
    /// Every launcher, in the order they are looked for: torchrun first,
    /// because `srun torchrun ...` and `mpirun torchrun ...` leave the outer
    /// launcher's variables describing torchrun's agent, not the worker.
    pub const ALL: [Launcher; 4] = [
        Launcher::Torchrun,
        Launcher::Slurm,
        Launcher::OpenMpi,
        Launcher::Pmi,
    ];

    /// Rank, world size and local rank variables.
    fn vocabulary(self) -> Vocabulary {
        match self {
            Launcher::Torchrun => Vocabulary {
                rank: "RANK",
                world_size: "WORLD_SIZE",
                local_rank: "LOCAL_RANK",
            },
            Launcher::Slurm => Vocabulary {
                rank: "SLURM_PROCID",
                world_size: "SLURM_NTASKS",
                local_rank: "SLURM_LOCALID",
            },
            Launcher::OpenMpi => Vocabulary {
                rank: "OMPI_COMM_WORLD_RANK",
                world_size: "OMPI_COMM_WORLD_SIZE",
                local_rank: "OMPI_COMM_WORLD_LOCAL_RANK",
            },
            Launcher::Pmi => Vocabulary {
                rank: "PMI_RANK",
                world_size: "PMI_SIZE",
                local_rank: "MPI_LOCALRANKID",
            },
        }
    }

    /// The variable holding the global rank (`RANK`, `SLURM_PROCID`, ...).
    pub fn rank_variable(self) -> &'static str {
        self.vocabulary().rank
    }

    /// The variable holding the number of ranks (`WORLD_SIZE`,
    /// `SLURM_NTASKS`, ...).
    pub fn world_size_variable(self) -> &'static str {
        self.vocabulary().world_size
    }

    /// The variable holding the rank within the node (`LOCAL_RANK`,
    /// `SLURM_LOCALID`, ...).
    pub fn local_rank_variable(self) -> &'static str {
        self.vocabulary().local_rank
    }
}

struct Vocabulary {
    rank: &'static str,
    world_size: &'static str,
    local_rank: &'static str,
}

impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launcher::Torchrun => "torchrun",
            Launcher::Slurm => "Slurm",
            Launcher::OpenMpi => "Open MPI",
            Launcher::Pmi => "MPICH/Intel MPI (PMI)",
        })
    }
}

/// Why a launcher's rank could not be read.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LauncherError {
    /// No launcher's variables are set: the process was started by hand.
    #[error(
        "no launcher gave this process a rank: none of {} is set; start it with torchrun, \
         srun or mpirun, or pass the rank and world size to setup_telemetry",
        looked_for()
    )]
    NotLaunched,
    /// A launcher's rank is set without its world size, or the reverse.
    #[error("{set} is set but {missing} is not; {launcher} sets both")]
    Incomplete {
        /// The launcher the set variable belongs to.
        launcher: Launcher,
        /// The variable that is set, with its value (`RANK=3`).
        set: String,
        /// The variable that is missing.
        missing: &'static str,
    },
    /// A value is not a number, or the rank is not below the world size.
    #[error(transparent)]
    Invalid(#[from] ConfigError),
}

nemo_lens_core::__debug_as_sentence!(LauncherError);

fn looked_for() -> String {
    Launcher::ALL
        .iter()
        .map(|l| format!("{}/{} ({l})", l.rank_variable(), l.world_size_variable()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This process's place in its distributed job: global rank, world size and
/// rank within its node, as its launcher set them.
///
/// Read it with [`from_env`](Self::from_env) and hand it to
/// [`SetupOptions::setup_job`](super::SetupOptions::setup_job) (or call
/// [`setup_telemetry_from_launcher`](super::setup_telemetry_from_launcher)),
/// so no program spells out a rank:
///
/// ```
/// use nemo_lens::telemetry::{EnvLookup, JobRank, Launcher};
///
/// // What torchrun --nproc-per-node 4 gives its third worker.
/// let env = EnvLookup::from_pairs([("RANK", "2"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "2")]);
/// let job = JobRank::from_lookup(&env)?;
/// assert_eq!((job.rank, job.world_size, job.local_rank), (2, 4, 2));
/// assert_eq!(job.launcher, Some(Launcher::Torchrun));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Launchers are looked for in this order, the first whose rank or world
/// size is set wins:
///
/// | launcher | rank | world size | local rank |
/// |---|---|---|---|
/// | torchrun (DeepSpeed, Accelerate, Lightning) | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` |
/// | Slurm (`srun`) | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_LOCALID` |
/// | Open MPI (`mpirun`) | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` |
/// | MPICH, Intel MPI (Hydra) | `PMI_RANK` | `PMI_SIZE` | `MPI_LOCALRANKID` |
///
/// A missing local rank is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRank {
    /// Global rank of this process.
    pub rank: u32,
    /// Number of ranks in the job.
    pub world_size: u32,
    /// Rank within this node.
    pub local_rank: u32,
    /// The launcher the values came from; `None` when given by the program.
    pub launcher: Option<Launcher>,
}

impl JobRank {
    /// Rank 0 of 1: a process started by hand.
    pub const SINGLE: JobRank = JobRank {
        rank: 0,
        world_size: 1,
        local_rank: 0,
        launcher: None,
    };

    /// The rank the process environment's launcher set; an error naming
    /// the variables when no launcher's are set, or when one is not a
    /// number.
    pub fn from_env() -> Result<JobRank, LauncherError> {
        Self::from_lookup(&EnvLookup::process())
    }

    /// The same, read from `env`.
    pub fn from_lookup(env: &EnvLookup) -> Result<JobRank, LauncherError> {
        Self::detect(env)?.ok_or(LauncherError::NotLaunched)
    }

    /// The rank `env`'s launcher set; `None` when no launcher's variables
    /// are set, for a program that also runs by hand:
    /// `JobRank::detect(&env)?.unwrap_or(JobRank::SINGLE)`.
    pub fn detect(env: &EnvLookup) -> Result<Option<JobRank>, LauncherError> {
        for launcher in Launcher::ALL {
            let (rank_var, world_var) = (launcher.rank_variable(), launcher.world_size_variable());
            let (rank, world_size) = match (env.get(rank_var), env.get(world_var)) {
                (None, None) => continue,
                (Some(rank), Some(world_size)) => (rank, world_size),
                (Some(rank), None) => {
                    return Err(LauncherError::Incomplete {
                        launcher,
                        set: format!("{rank_var}={rank}"),
                        missing: world_var,
                    })
                }
                (None, Some(world_size)) => {
                    return Err(LauncherError::Incomplete {
                        launcher,
                        set: format!("{world_var}={world_size}"),
                        missing: rank_var,
                    })
                }
            };
            let world_size: u32 =
                parse_number(world_var, &world_size, "a positive number of ranks")?;
            if world_size == 0 {
                return Err(ConfigError::new(world_var, "0", "a positive number of ranks").into());
            }
            let expected = format!("a rank in 0..{world_size} ({world_var}={world_size})");
            let rank: u32 = parse_number(rank_var, &rank, &expected)?;
            if rank >= world_size {
                return Err(ConfigError::new(rank_var, rank.to_string(), expected).into());
            }
            let local_var = launcher.local_rank_variable();
            let local_rank = match env.get(local_var) {
                Some(v) => parse_number(local_var, &v, "a non-negative integer")?,
                None => 0,
            };
            return Ok(Some(JobRank {
                rank,
                world_size,
                local_rank,
                launcher: Some(launcher),
            }));
        }
        Ok(None)
    }

    /// Rank `rank` of `world_size`, given by the program. Setup reads its
    /// local rank from the environment: the first set of `LOCAL_RANK`,
    /// `SLURM_LOCALID`, `OMPI_COMM_WORLD_LOCAL_RANK`, `MPI_LOCALRANKID`.
    pub fn new(rank: u32, world_size: u32) -> JobRank {
        JobRank {
            rank,
            world_size,
            local_rank: 0,
            launcher: None,
        }
    }
}

impl Default for JobRank {
    fn default() -> Self {
        JobRank::SINGLE
    }
}

/// The rank within the node and the variable it came from: the first set
/// of `LOCAL_RANK`, `SLURM_LOCALID`, `OMPI_COMM_WORLD_LOCAL_RANK`,
/// `MPI_LOCALRANKID`; 0 and `None` when none is.
pub(crate) fn local_rank(env: &EnvLookup) -> Result<(u32, Option<&'static str>), ConfigError> {
    for launcher in Launcher::ALL {
        let variable = launcher.local_rank_variable();
        if let Some(v) = env.get(variable) {
            return Ok((
                parse_number(variable, &v, "a non-negative integer")?,
                Some(variable),
            ));
        }
    }
    Ok((0, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(pairs: &[(&str, &str)]) -> Result<Option<JobRank>, LauncherError> {
        JobRank::detect(&EnvLookup::from_pairs(pairs.iter().copied()))
    }

    #[test]
    fn each_launcher_is_read_with_its_own_variables() {
        let cases: [(&[(&str, &str)], Launcher); 4] = [
            (
                &[("RANK", "3"), ("WORLD_SIZE", "8"), ("LOCAL_RANK", "1")],
                Launcher::Torchrun,
            ),
            (
                &[
                    ("SLURM_PROCID", "3"),
                    ("SLURM_NTASKS", "8"),
                    ("SLURM_LOCALID", "1"),
                ],
                Launcher::Slurm,
            ),
            (
                &[
                    ("OMPI_COMM_WORLD_RANK", "3"),
                    ("OMPI_COMM_WORLD_SIZE", "8"),
                    ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                ],
                Launcher::OpenMpi,
            ),
            (
                &[
                    ("PMI_RANK", "3"),
                    ("PMI_SIZE", "8"),
                    ("MPI_LOCALRANKID", "1"),
                ],
                Launcher::Pmi,
            ),
        ];
        for (pairs, launcher) in cases {
            assert_eq!(
                detect(pairs).unwrap(),
                Some(JobRank {
                    rank: 3,
                    world_size: 8,
                    local_rank: 1,
                    launcher: Some(launcher),
                }),
                "{launcher}"
            );
        }
    }

    #[test]
    fn torchrun_inside_srun_wins_over_the_slurm_task() {
        // `srun torchrun --nproc-per-node 4`: one Slurm task per node, four
        // torchrun workers in it.
        let job = detect(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_LOCALID", "0"),
            ("RANK", "6"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "2"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((job.rank, job.world_size, job.local_rank), (6, 8, 2));
        assert_eq!(job.launcher, Some(Launcher::Torchrun));
    }

    #[test]
    fn nothing_set_is_none_and_an_error_naming_every_variable_when_asked_for() {
        assert_eq!(detect(&[]).unwrap(), None);
        let err = JobRank::from_lookup(&EnvLookup::from_pairs([("X", "1")])).unwrap_err();
        let message = err.to_string();
        for variable in [
            "RANK/WORLD_SIZE",
            "SLURM_PROCID/SLURM_NTASKS",
            "OMPI_COMM_WORLD_RANK",
            "PMI_RANK",
        ] {
            assert!(message.contains(variable), "{variable} in {message}");
        }
    }

    #[test]
    fn a_rank_without_its_world_size_names_the_missing_variable() {
        let err = detect(&[("RANK", "3")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RANK=3 is set but WORLD_SIZE is not; torchrun sets both"
        );
        let err = detect(&[("SLURM_NTASKS", "4")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SLURM_NTASKS=4 is set but SLURM_PROCID is not; Slurm sets both"
        );
    }

    #[test]
    fn bad_values_name_the_variable_and_the_value() {
        let err = detect(&[("RANK", "4"), ("WORLD_SIZE", "4")]).unwrap_err();
        let LauncherError::Invalid(err) = err else {
            panic!("{err}")
        };
        assert_eq!((err.variable.as_str(), err.value.as_str()), ("RANK", "4"));
        assert_eq!(err.expected, "a rank in 0..4 (WORLD_SIZE=4)");
        let err = detect(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "2")]).unwrap_err();
        assert!(err.to_string().contains("SLURM_PROCID"), "{err}");
        let err = detect(&[("PMI_RANK", "0"), ("PMI_SIZE", "0")]).unwrap_err();
        assert!(err.to_string().contains("PMI_SIZE"), "{err}");
        let err = detect(&[("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "-1")]).unwrap_err();
        assert!(err.to_string().contains("LOCAL_RANK"), "{err}");
    }

    #[test]
    fn the_local_rank_comes_from_the_first_launcher_that_sets_one() {
        let env = EnvLookup::from_pairs([("SLURM_LOCALID", "3")]);
        assert_eq!(local_rank(&env).unwrap(), (3, Some("SLURM_LOCALID")));
        let env = EnvLookup::from_pairs([("SLURM_LOCALID", "3"), ("LOCAL_RANK", "1")]);
        assert_eq!(local_rank(&env).unwrap(), (1, Some("LOCAL_RANK")));
        assert_eq!(
            local_rank(&EnvLookup::from_pairs([("X", "1")])).unwrap(),
            (0, None)
        );
    }
}
