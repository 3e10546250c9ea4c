//! Which ranks of a distributed job export metrics.
//!
//! Every rank records (so code is identical on every rank), but only the
//! ranks a strategy picks get a real exporter; the others get a no-op meter.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// What a strategy knows about the rank deciding whether to export.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankContext {
    /// Global rank of this process.
    pub rank: u32,
    /// Number of ranks in the job.
    pub world_size: u32,
    /// Rank within this node (`LOCAL_RANK`, 0 when unset).
    pub local_rank: u32,
    /// `NEMO_LENS_EXPORT_RANK`, already resolved against `world_size`
    /// (so -1 became `world_size - 1`).
    pub export_rank: u32,
    /// `NEMO_LENS_EXPORT_SAMPLE_RATE`.
    pub sample_rate: f64,
}

/// A user-defined strategy: `true` when the rank should export.
pub type StrategyFn = Arc<dyn Fn(&RankContext) -> bool + Send + Sync>;

/// How ranks are chosen for export (`NEMO_LENS_EXPORT_STRATEGY`).
#[derive(Clone)]
pub enum ExportStrategy {
    /// Every rank exports (`all_ranks`).
    AllRanks,
    /// Only `NEMO_LENS_EXPORT_RANK` exports (`single_rank`, the default).
    SingleRank,
    /// A deterministic pseudo-random subset of ranks (`sampled`), the same
    /// ranks Python nemo-lens picks: see [`sampled_rank_selected`].
    Sampled,
    /// The rank with `LOCAL_RANK` 0 on each node (`first_rank_per_node`).
    FirstRankPerNode,
    /// A strategy registered with [`register_export_strategy`].
    Custom(String, StrategyFn),
}

impl ExportStrategy {
    /// The names accepted by `NEMO_LENS_EXPORT_STRATEGY` besides registered
    /// ones.
    pub const BUILT_IN: [&'static str; 4] =
        ["all_ranks", "single_rank", "sampled", "first_rank_per_node"];

    /// The strategy called `name`: a built-in one or one registered with
    /// [`register_export_strategy`].
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "all_ranks" => Some(ExportStrategy::AllRanks),
            "single_rank" => Some(ExportStrategy::SingleRank),
            "sampled" => Some(ExportStrategy::Sampled),
            "first_rank_per_node" => Some(ExportStrategy::FirstRankPerNode),
            _ => registry()
                .get(name)
                .map(|f| ExportStrategy::Custom(name.to_owned(), f.clone())),
        }
    }

    /// The name this strategy is selected by.
    pub fn name(&self) -> &str {
        match self {
            ExportStrategy::AllRanks => "all_ranks",
            ExportStrategy::SingleRank => "single_rank",
            ExportStrategy::Sampled => "sampled",
            ExportStrategy::FirstRankPerNode => "first_rank_per_node",
            ExportStrategy::Custom(name, _) => name,
        }
    }

    /// Whether the rank described by `ctx` exports.
    pub fn should_export(&self, ctx: &RankContext) -> bool {
        match self {
            ExportStrategy::AllRanks => true,
            ExportStrategy::SingleRank => ctx.rank == ctx.export_rank,
            ExportStrategy::Sampled => sampled_rank_selected(ctx.rank, ctx.sample_rate),
            ExportStrategy::FirstRankPerNode => ctx.local_rank == 0,
            ExportStrategy::Custom(_, f) => f(ctx),
        }
    }

    /// Every name currently accepted, for error messages.
    pub(crate) fn accepted_names() -> String {
        let mut names: Vec<String> = Self::BUILT_IN.iter().map(|s| (*s).to_owned()).collect();
        let mut custom: Vec<String> = registry().keys().cloned().collect();
        custom.sort();
        names.extend(custom);
        format!("one of {}", names.join(", "))
    }
}

impl fmt::Debug for ExportStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExportStrategy({})", self.name())
    }
}

impl PartialEq for ExportStrategy {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

static REGISTRY: Mutex<Option<HashMap<String, StrategyFn>>> = Mutex::new(None);

fn registry() -> HashMap<String, StrategyFn> {
    // A poisoned lock only means a registering thread panicked; the map is
    // still whole.
    REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}

/// Makes `name` usable as `NEMO_LENS_EXPORT_STRATEGY`. Register before
/// reading the configuration. Re-registering a name replaces it; built-in
/// names cannot be replaced.
///
/// ```
/// use nemo_lens::telemetry::{register_export_strategy, ExportStrategy};
/// register_export_strategy("even_ranks", |ctx| ctx.rank % 2 == 0).unwrap();
/// assert_eq!(ExportStrategy::by_name("even_ranks").unwrap().name(), "even_ranks");
/// ```
pub fn register_export_strategy(
    name: impl Into<String>,
    strategy: impl Fn(&RankContext) -> bool + Send + Sync + 'static,
) -> Result<(), super::ConfigError> {
    let name = name.into();
    if ExportStrategy::BUILT_IN.contains(&name.as_str()) || name.is_empty() {
        return Err(super::ConfigError::new(
            "export strategy name",
            name,
            "a non-empty name other than all_ranks, single_rank, sampled, first_rank_per_node",
        ));
    }
    REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(name, Arc::new(strategy));
    Ok(())
}

/// The `sampled` rule of Python nemo-lens:
/// `int(md5(str(rank)).hexdigest(), 16) % 10000 / 10000 < rate`.
///
/// Mixed Python and Rust jobs therefore export from the same ranks.
pub fn sampled_rank_selected(rank: u32, rate: f64) -> bool {
    sample_bucket(rank) as f64 / 10_000.0 < rate
}

/// The md5 digest of the decimal rank, as a big-endian integer, mod 10000.
fn sample_bucket(rank: u32) -> u32 {
    let digest = md5::compute(rank.to_string().as_bytes());
    digest
        .0
        .iter()
        .fold(0u32, |acc, &byte| (acc * 256 + u32::from(byte)) % 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(rank: u32) -> RankContext {
        RankContext {
            rank,
            world_size: 8,
            local_rank: rank % 4,
            export_rank: 7,
            sample_rate: 0.5,
        }
    }

    #[test]
    fn sample_buckets_match_python_hashlib() {
        // Computed once with CPython 3.11:
        //   [int(hashlib.md5(str(r).encode()).hexdigest(), 16) % 10000
        //    for r in (0, 1, 2, 3, 7, 42, 1023)]
        let expected = [
            (0, 7850),
            (1, 8411),
            (2, 9212),
            (3, 883),
            (7, 5555),
            (42, 5174),
            (1023, 7227),
        ];
        for (rank, bucket) in expected {
            assert_eq!(sample_bucket(rank), bucket, "rank {rank}");
        }
    }

    #[test]
    fn built_in_strategies_pick_the_documented_ranks() {
        let picked = |s: ExportStrategy| -> Vec<u32> {
            (0..8).filter(|&r| s.should_export(&ctx(r))).collect()
        };
        assert_eq!(picked(ExportStrategy::AllRanks), (0..8).collect::<Vec<_>>());
        assert_eq!(picked(ExportStrategy::SingleRank), vec![7]);
        assert_eq!(picked(ExportStrategy::FirstRankPerNode), vec![0, 4]);
        // Computed with CPython 3.11: [r for r in range(8) if
        //   int(hashlib.md5(str(r).encode()).hexdigest(), 16) % 10000 / 10000 < 0.5]
        assert_eq!(picked(ExportStrategy::Sampled), vec![3, 4, 5, 6]);
    }

    #[test]
    fn sampled_rate_bounds_select_none_or_all() {
        assert!((0..100).all(|r| !sampled_rank_selected(r, 0.0)));
        assert!((0..100).all(|r| sampled_rank_selected(r, 1.0)));
    }

    #[test]
    fn registered_strategies_are_found_by_name() {
        register_export_strategy("test_odd_ranks", |c| c.rank % 2 == 1).unwrap();
        let s = ExportStrategy::by_name("test_odd_ranks").unwrap();
        assert!(s.should_export(&ctx(3)));
        assert!(!s.should_export(&ctx(2)));
        assert!(ExportStrategy::accepted_names().contains("test_odd_ranks"));
        assert!(register_export_strategy("sampled", |_| true).is_err());
        assert!(ExportStrategy::by_name("nope").is_none());
    }
}
