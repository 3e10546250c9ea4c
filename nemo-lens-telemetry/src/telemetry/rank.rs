//! The rank context an export strategy decides on.

use super::config::NemoLensConfig;
use super::env::{parse_number, ConfigError, EnvLookup};
use super::error::SetupError;
use super::strategy::{ExportStrategy, RankContext};

/// Resolves `NEMO_LENS_EXPORT_RANK` against the world size and reads
/// `LOCAL_RANK`.
pub(super) fn rank_context(
    config: &NemoLensConfig,
    env: &EnvLookup,
    rank: u32,
    world_size: u32,
) -> Result<RankContext, SetupError> {
    let local_rank = match env.get("LOCAL_RANK") {
        Some(v) => parse_number("LOCAL_RANK", &v, "a non-negative integer")?,
        None => 0,
    };
    let resolved = if config.export_rank < 0 {
        i64::from(world_size) + config.export_rank
    } else {
        config.export_rank
    };
    let export_rank = match u32::try_from(resolved) {
        Ok(r) if r < world_size => r,
        _ if config.export_strategy != ExportStrategy::SingleRank => 0,
        _ => {
            return Err(ConfigError::new(
                &config.export_rank_variable,
                config.export_rank.to_string(),
                format!("a rank in -{world_size}..{world_size} for world size {world_size}"),
            )
            .into())
        }
    };
    Ok(RankContext {
        rank,
        world_size,
        local_rank,
        export_rank,
        sample_rate: config.export_sample_rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_of_range_rank_names_the_variable_it_came_from() {
        let env = EnvLookup::from_pairs([("MEGATRON_OTEL_EXPORT_RANK", "9")]);
        let config =
            NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
                .unwrap();
        let err = rank_context(&config, &EnvLookup::from_pairs([("X", "1")]), 0, 4).unwrap_err();
        let SetupError::Config(err) = err else {
            panic!("{err}")
        };
        assert_eq!(err.variable, "MEGATRON_OTEL_EXPORT_RANK");
        assert_eq!(err.value, "9");

        let env = EnvLookup::from_pairs([("NEMO_LENS_EXPORT_RANK", "-5")]);
        let config =
            NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
                .unwrap();
        let err = rank_context(&config, &EnvLookup::from_pairs([("X", "1")]), 0, 4).unwrap_err();
        assert!(err.to_string().contains("NEMO_LENS_EXPORT_RANK"), "{err}");
    }
}
