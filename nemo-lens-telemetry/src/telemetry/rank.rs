//! What a rank decides: the context an export strategy decides on, why a
//! rank left out does not export, and the port of a rank's endpoint.

use std::borrow::Cow;

use super::config::NemoLensConfig;
use super::env::ConfigError;
use super::error::SetupError;
use super::strategy::{ExportStrategy, RankContext};

/// Resolves `NEMO_LENS_EXPORT_RANK` against the world size, with the local
/// rank setup found.
pub(super) fn rank_context(
    config: &NemoLensConfig,
    local_rank: u32,
    rank: u32,
    world_size: u32,
) -> Result<RankContext, SetupError> {
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

/// Why the rank of `ctx` does not export, naming the variables that
/// decided it and the one to set.
pub(super) fn not_exported(
    config: &NemoLensConfig,
    ctx: &RankContext,
    local_rank_variable: Option<&str>,
) -> String {
    let RankContext {
        rank, world_size, ..
    } = *ctx;
    let prefix = &config.prefix;
    let why = match &config.export_strategy {
        ExportStrategy::SingleRank => {
            format!(" ({} picks rank {})", rank_setting(config), ctx.export_rank)
        }
        ExportStrategy::FirstRankPerNode => format!(
            " (it exports from local rank 0 of each node, and {} makes this local rank {})",
            match local_rank_variable {
                Some(variable) => Cow::Owned(format!("{variable}={}", ctx.local_rank)),
                None => Cow::Borrowed("the launcher"),
            },
            ctx.local_rank
        ),
        ExportStrategy::Sampled => {
            format!(" (rate {} leaves this rank out)", config.export_sample_rate)
        }
        _ => String::new(),
    };
    format!(
        "nemo-lens telemetry is not exported from rank {rank} of {world_size}: \
         {prefix}_EXPORT_STRATEGY={} selects other ranks{why} (set \
         {prefix}_EXPORT_STRATEGY=all_ranks, or {prefix}_EXPORT_RANK={rank} with \
         single_rank, to export from this one)",
        config.export_strategy.name()
    )
}

fn rank_setting(config: &NemoLensConfig) -> String {
    format!("{}={}", config.export_rank_variable, config.export_rank)
}

/// The configuration with the Prometheus port moved up by the local rank,
/// when asked for (by the option, else the configuration), so that the
/// ranks on one host serve one port each. Port 0 (any free port) stays 0.
pub(super) fn with_local_port(
    config: &NemoLensConfig,
    option: Option<bool>,
    local_rank: u32,
) -> Result<Cow<'_, NemoLensConfig>, ConfigError> {
    let base = config.prometheus_addr.port();
    if !option.unwrap_or(config.prometheus_port_per_local_rank) || base == 0 || local_rank == 0 {
        return Ok(Cow::Borrowed(config));
    }
    let port = u16::try_from(u32::from(base) + local_rank).map_err(|_| {
        ConfigError::new(
            "OTEL_EXPORTER_PROMETHEUS_PORT",
            base.to_string(),
            format!(
                "a port that local rank {local_rank} can be added to without passing 65535 \
                 ({}_PROMETHEUS_PORT_PER_LOCAL_RANK is on)",
                config.prefix
            ),
        )
    })?;
    let mut moved = config.clone();
    moved.prometheus_addr.set_port(port);
    Ok(Cow::Owned(moved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::EnvLookup;

    #[test]
    fn an_out_of_range_rank_names_the_variable_it_came_from() {
        let env = EnvLookup::from_pairs([("MEGATRON_OTEL_EXPORT_RANK", "9")]);
        let config =
            NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
                .unwrap();
        let err = rank_context(&config, 0, 0, 4).unwrap_err();
        let SetupError::Config(err) = err else {
            panic!("{err}")
        };
        assert_eq!(err.variable, "MEGATRON_OTEL_EXPORT_RANK");
        assert_eq!(err.value, "9");

        let env = EnvLookup::from_pairs([("NEMO_LENS_EXPORT_RANK", "-5")]);
        let config =
            NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
                .unwrap();
        let err = rank_context(&config, 0, 0, 4).unwrap_err();
        assert!(err.to_string().contains("NEMO_LENS_EXPORT_RANK"), "{err}");
    }

    fn config(pairs: &[(&str, &str)]) -> NemoLensConfig {
        NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs.iter().copied())).unwrap()
    }

    #[test]
    fn a_rank_left_out_is_told_which_variable_decided_it() {
        let first_per_node = config(&[("NEMO_LENS_EXPORT_STRATEGY", "first_rank_per_node")]);
        let ctx = rank_context(&first_per_node, 2, 6, 8).unwrap();
        assert_eq!(
            not_exported(&first_per_node, &ctx, Some("SLURM_LOCALID")),
            "nemo-lens telemetry is not exported from rank 6 of 8: \
             NEMO_LENS_EXPORT_STRATEGY=first_rank_per_node selects other ranks (it exports from \
             local rank 0 of each node, and SLURM_LOCALID=2 makes this local rank 2) (set \
             NEMO_LENS_EXPORT_STRATEGY=all_ranks, or NEMO_LENS_EXPORT_RANK=6 with single_rank, \
             to export from this one)"
        );
        let single = config(&[]);
        let ctx = rank_context(&single, 0, 1, 4).unwrap();
        assert!(
            not_exported(&single, &ctx, None).contains(
                "single_rank selects other ranks (NEMO_LENS_EXPORT_RANK=-1 picks rank 3)"
            ),
            "{}",
            not_exported(&single, &ctx, None)
        );
    }

    #[test]
    fn the_port_moves_up_by_the_local_rank_only_when_asked() {
        let on = config(&[
            ("OTEL_EXPORTER_PROMETHEUS_PORT", "9500"),
            ("NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK", "true"),
        ]);
        assert_eq!(
            with_local_port(&on, None, 3)
                .unwrap()
                .prometheus_addr
                .port(),
            9503
        );
        // The option wins over the variable.
        assert_eq!(
            with_local_port(&on, Some(false), 3)
                .unwrap()
                .prometheus_addr
                .port(),
            9500
        );
        let off = config(&[("OTEL_EXPORTER_PROMETHEUS_PORT", "9500")]);
        assert_eq!(
            with_local_port(&off, None, 3)
                .unwrap()
                .prometheus_addr
                .port(),
            9500
        );
        assert_eq!(
            with_local_port(&off, Some(true), 3)
                .unwrap()
                .prometheus_addr
                .port(),
            9503
        );
        // Any free port stays any free port.
        let any = config(&[("OTEL_EXPORTER_PROMETHEUS_PORT", "0")]);
        assert_eq!(
            with_local_port(&any, Some(true), 3)
                .unwrap()
                .prometheus_addr
                .port(),
            0
        );
        let top = config(&[("OTEL_EXPORTER_PROMETHEUS_PORT", "65535")]);
        let err = with_local_port(&top, Some(true), 1).unwrap_err();
        assert_eq!(err.variable, "OTEL_EXPORTER_PROMETHEUS_PORT");
        assert!(err.expected.contains("local rank 1"), "{err}");
    }
}
