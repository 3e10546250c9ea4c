//! aiperf's `--goodput` syntax: `key:value` pairs separated by white space,
//! each value a number in the metric's display unit.

use std::fmt;
use std::str::FromStr;

use super::{ObjectiveKind, Slo};

/// Why a `--goodput` string is refused: the pair, and what is wrong with
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SloParseError {
    /// The `key:value` pair refused, as written (empty for an empty string).
    pub pair: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for SloParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pair.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "`{}`: {}", self.pair, self.reason)
        }
    }
}

impl std::error::Error for SloParseError {}

impl Slo {
    /// Parses aiperf's `--goodput` string, such as
    /// `"time_to_first_token:300 inter_token_latency:20"`: the keys are
    /// aiperf's tags of the metrics nemo-lens judges per request
    /// ([`ObjectiveKind::key`]), the values in aiperf's display units (ms;
    /// tokens/s for `output_token_throughput_per_user`). A key given twice
    /// keeps its last value, as in aiperf.
    ///
    /// # Errors
    ///
    /// An empty string, a pair without `:`, a key nemo-lens does not judge,
    /// or a value that is not a positive number, each naming the pair.
    pub fn parse(objectives: &str) -> Result<Slo, SloParseError> {
        let mut slo = Slo::new();
        for pair in objectives.split_whitespace() {
            let refuse = |reason: String| SloParseError {
                pair: pair.to_owned(),
                reason,
            };
            let (key, value) = pair
                .split_once(':')
                .ok_or_else(|| refuse("not in `key:value` form".to_owned()))?;
            let kind = ObjectiveKind::from_key(key.trim()).ok_or_else(|| {
                let known: Vec<&str> = ObjectiveKind::ALL.iter().map(|k| k.key()).collect();
                refuse(format!(
                    "`{key}` is not an objective nemo-lens judges per request; the keys are {}",
                    known.join(", ")
                ))
            })?;
            let target: f64 = value.trim().parse().map_err(|_| {
                refuse(format!(
                    "`{value}` is not a number of {} (aiperf's display unit, written without it)",
                    kind.unit()
                ))
            })?;
            if !(target.is_finite() && target > 0.0) {
                return Err(refuse(format!(
                    "the target must be a positive number of {}, not {value}",
                    kind.unit()
                )));
            }
            slo = slo.with(kind, target);
        }
        if slo.is_empty() {
            return Err(SloParseError {
                pair: String::new(),
                reason: "no objective given; write `key:value` pairs such as \
                         `time_to_first_token:300 inter_token_latency:20`"
                    .to_owned(),
            });
        }
        Ok(slo)
    }
}

impl FromStr for Slo {
    type Err = SloParseError;

    fn from_str(objectives: &str) -> Result<Self, Self::Err> {
        Slo::parse(objectives)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiperf_s_examples_parse_in_order() {
        let slo = Slo::parse(
            "  request_latency:250\tinter_token_latency:10 output_token_throughput_per_user:600 ",
        )
        .unwrap();
        let got: Vec<(ObjectiveKind, f64)> = slo
            .objectives()
            .iter()
            .map(|o| (o.kind, o.target))
            .collect();
        assert_eq!(
            got,
            [
                (ObjectiveKind::RequestLatency, 250.0),
                (ObjectiveKind::InterTokenLatency, 10.0),
                (ObjectiveKind::OutputTokenThroughputPerUser, 600.0),
            ]
        );
        assert_eq!(
            slo.to_string(),
            "request_latency:250 inter_token_latency:10 output_token_throughput_per_user:600"
        );
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value_where_it_first_was() {
        let slo = Slo::parse("time_to_first_token:300 request_latency:1 time_to_first_token:0.5")
            .unwrap();
        assert_eq!(slo.to_string(), "time_to_first_token:0.5 request_latency:1");
    }

    #[test]
    fn each_refusal_names_the_pair_and_the_problem() {
        let refused = |s: &str| Slo::parse(s).unwrap_err().to_string();
        assert_eq!(
            refused("time_to_first_token:300 ttft:200"),
            "`ttft:200`: `ttft` is not an objective nemo-lens judges per request; the keys are \
             time_to_first_token, inter_token_latency, request_latency, \
             output_token_throughput_per_user"
        );
        assert_eq!(
            refused("request_latency:3s"),
            "`request_latency:3s`: `3s` is not a number of ms (aiperf's display unit, written \
             without it)"
        );
        assert_eq!(
            refused("inter_token_latency:0"),
            "`inter_token_latency:0`: the target must be a positive number of ms, not 0"
        );
        assert_eq!(
            refused("output_token_throughput_per_user:-5"),
            "`output_token_throughput_per_user:-5`: the target must be a positive number of \
             tokens/s, not -5"
        );
        assert_eq!(
            refused("inter_token_latency:NaN"),
            "`inter_token_latency:NaN`: the target must be a positive number of ms, not NaN"
        );
        assert_eq!(
            refused("time_to_first_token=300"),
            "`time_to_first_token=300`: not in `key:value` form"
        );
        assert!(refused("  ").starts_with("no objective given"));
    }
}
