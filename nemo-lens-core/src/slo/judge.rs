//! One request's measurements and the verdict on them, by aiperf's
//! definitions (`aiperf/metrics/types/`: `ttft_metric.py`,
//! `request_latency_metric.py`, `inter_token_latency_metric.py`,
//! `output_token_throughput_metrics.py`, `good_request_count_metric.py`).

use std::time::Duration;

use super::{ObjectiveKind, Slo};

/// What one request measured, as the server saw it.
///
/// - `latency`: from its start to its last content chunk (aiperf's request
///   latency "uses the last content response, not usage-only chunks"), or
///   to its end where there were no chunks;
/// - `time_to_first_token`: to its first content chunk; `None` for a
///   request that was not streamed;
/// - `output_tokens`: the tokens it produced, when known;
/// - `first_chunk_tokens`: the tokens of the first content chunk, when known
///   (else the first chunk counts as one token, as in aiperf without
///   `--per-chunk-usage`).
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    failed: bool,
    latency: Duration,
    time_to_first_token: Option<Duration>,
    output_tokens: Option<u64>,
    first_chunk_tokens: Option<u64>,
}

impl Served {
    /// A request that completed after `latency`.
    pub fn ok(latency: Duration) -> Self {
        Served {
            failed: false,
            latency,
            time_to_first_token: None,
            output_tokens: None,
            first_chunk_tokens: None,
        }
    }

    /// A request that failed, was refused or was cancelled: never good.
    pub fn failed() -> Self {
        Served {
            failed: true,
            ..Served::ok(Duration::ZERO)
        }
    }

    /// Its first content chunk came `after` its start.
    #[must_use]
    pub fn time_to_first_token(mut self, after: Duration) -> Self {
        self.time_to_first_token = Some(after);
        self
    }

    /// It produced `tokens` output tokens.
    #[must_use]
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.output_tokens = Some(tokens);
        self
    }

    /// Its first content chunk carried `tokens` tokens.
    #[must_use]
    pub fn first_chunk_tokens(mut self, tokens: u64) -> Self {
        self.first_chunk_tokens = Some(tokens);
        self
    }

    /// aiperf's inter-token latency: (latency − time to first token) /
    /// (output tokens − the first chunk's tokens); one token is assumed in
    /// the first chunk when its count is unknown or inconsistent (not
    /// positive, or leaving no token after it). `None` below two output
    /// tokens or without a first token.
    pub fn inter_token_latency(&self) -> Option<Duration> {
        let ttft = self.time_to_first_token?;
        let tokens = self.output_tokens.filter(|&n| n >= 2)?;
        let decode = match self.first_chunk_tokens {
            Some(first) if first > 0 && first < tokens => tokens - first,
            _ => tokens - 1,
        };
        let window = self.latency.saturating_sub(ttft);
        Some(window.div_f64(decode as f64))
    }

    /// The value an objective of `kind` is compared with, in its unit; `None`
    /// when it cannot be computed.
    fn value(&self, kind: ObjectiveKind) -> Option<f64> {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        match kind {
            ObjectiveKind::TimeToFirstToken => self.time_to_first_token.map(ms),
            ObjectiveKind::RequestLatency => Some(ms(self.latency)),
            ObjectiveKind::InterTokenLatency => self.inter_token_latency().map(ms),
            ObjectiveKind::OutputTokenThroughputPerUser => self
                .inter_token_latency()
                .filter(|itl| !itl.is_zero())
                .map(|itl| 1.0 / itl.as_secs_f64()),
        }
    }
}

/// Whether a request met every objective, or why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// It met every objective: it counts toward goodput.
    Met,
    /// It failed, was refused or was cancelled.
    Failed,
    /// It missed this objective, the first in the [`Slo`]'s order that it
    /// missed (or whose value could not be computed).
    Missed(ObjectiveKind),
}

impl Verdict {
    /// The value counted: `met`, `error`, or the missed objective's
    /// [short name](ObjectiveKind::short) (`ttft`, `itl`, `e2e`, `tps`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Failed => "error",
            Verdict::Missed(kind) => kind.short(),
        }
    }

    /// Whether it counts toward goodput.
    pub fn is_good(self) -> bool {
        self == Verdict::Met
    }
}

impl Slo {
    /// Judges `request` as aiperf's good-request count does: a failed
    /// request is never good; each objective in order is compared with the
    /// request's value (at most the target, or at least it where larger is
    /// better), and the first it misses, or cannot be computed for (a
    /// one-token reply has no inter-token latency), decides.
    ///
    /// A request without a first token was not streamed: the streaming
    /// objectives (time to first token, inter-token latency, throughput per
    /// user) do not apply to it, as aiperf leaves them out of a run without
    /// streaming; its request latency still does.
    pub fn judge(&self, request: &Served) -> Verdict {
        if request.failed {
            return Verdict::Failed;
        }
        let streamed = request.time_to_first_token.is_some();
        for objective in &self.objectives {
            if !streamed && objective.kind != ObjectiveKind::RequestLatency {
                continue;
            }
            let met = request.value(objective.kind).is_some_and(|value| {
                if objective.kind.larger_is_better() {
                    value >= objective.target
                } else {
                    value <= objective.target
                }
            });
            if !met {
                return Verdict::Missed(objective.kind);
            }
        }
        Verdict::Met
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn slo(s: &str) -> Slo {
        s.parse().unwrap()
    }

    #[test]
    fn every_objective_met_is_met_and_the_first_missed_decides() {
        let both = slo("time_to_first_token:300 request_latency:3000");
        let fast = Served::ok(ms(900))
            .time_to_first_token(ms(20))
            .output_tokens(40);
        assert_eq!(both.judge(&fast), Verdict::Met);
        let slow_start = fast.clone().time_to_first_token(ms(700));
        assert_eq!(
            both.judge(&slow_start),
            Verdict::Missed(ObjectiveKind::TimeToFirstToken)
        );
        let slow_everything = Served::ok(ms(4000)).time_to_first_token(ms(700));
        assert_eq!(both.judge(&slow_everything).as_str(), "ttft");
        let reversed = slo("request_latency:3000 time_to_first_token:300");
        assert_eq!(reversed.judge(&slow_everything).as_str(), "e2e");
    }

    #[test]
    fn a_target_is_inclusive() {
        let at = Served::ok(ms(300)).time_to_first_token(ms(300));
        assert!(slo("time_to_first_token:300 request_latency:300")
            .judge(&at)
            .is_good());
    }

    #[test]
    fn failed_and_cancelled_requests_are_never_good() {
        assert_eq!(
            slo("request_latency:1000000").judge(&Served::failed()),
            Verdict::Failed
        );
        assert_eq!(Verdict::Failed.as_str(), "error");
    }

    #[test]
    fn inter_token_latency_is_aiperf_s_formula() {
        // (1000 - 100) / (10 - 1) = 100 ms.
        let one_token_first = Served::ok(ms(1000))
            .time_to_first_token(ms(100))
            .output_tokens(10);
        assert_eq!(one_token_first.inter_token_latency(), Some(ms(100)));
        // A first chunk of four tokens: (1000 - 100) / (10 - 4) = 150 ms.
        let bundled = one_token_first.clone().first_chunk_tokens(4);
        assert_eq!(bundled.inter_token_latency(), Some(ms(150)));
        let itl = slo("inter_token_latency:120");
        assert!(itl.judge(&one_token_first).is_good());
        assert_eq!(itl.judge(&bundled).as_str(), "itl");
        // An inconsistent first-chunk count (zero, or all the tokens) falls
        // back to one token, as aiperf does.
        for first in [0, 10, 12] {
            let odd = one_token_first.clone().first_chunk_tokens(first);
            assert_eq!(
                odd.inter_token_latency(),
                Some(ms(100)),
                "first chunk {first}"
            );
        }
    }

    #[test]
    fn a_one_token_reply_has_no_inter_token_latency_and_is_not_good() {
        let one = Served::ok(ms(50))
            .time_to_first_token(ms(50))
            .output_tokens(1);
        assert_eq!(one.inter_token_latency(), None);
        assert_eq!(slo("inter_token_latency:1000").judge(&one).as_str(), "itl");
        assert_eq!(
            slo("output_token_throughput_per_user:1")
                .judge(&one)
                .as_str(),
            "tps"
        );
        let unknown = Served::ok(ms(50)).time_to_first_token(ms(10));
        assert_eq!(
            slo("inter_token_latency:1000").judge(&unknown).as_str(),
            "itl"
        );
    }

    #[test]
    fn throughput_per_user_is_a_floor_on_one_over_the_inter_token_latency() {
        // ITL 20 ms: 50 tokens/s.
        let request = Served::ok(ms(210))
            .time_to_first_token(ms(10))
            .output_tokens(11);
        assert_eq!(request.inter_token_latency(), Some(ms(20)));
        assert!(slo("output_token_throughput_per_user:50")
            .judge(&request)
            .is_good());
        assert_eq!(
            slo("output_token_throughput_per_user:51").judge(&request),
            Verdict::Missed(ObjectiveKind::OutputTokenThroughputPerUser)
        );
    }

    #[test]
    fn a_request_not_streamed_is_judged_on_its_latency_alone() {
        let unary = Served::ok(ms(800)).output_tokens(1);
        let all = slo("time_to_first_token:1 inter_token_latency:1 request_latency:1000");
        assert!(all.judge(&unary).is_good());
        assert_eq!(all.judge(&Served::ok(ms(1200))).as_str(), "e2e");
    }

    /// Over a grid of requests, the verdict is "good" exactly when every
    /// objective holds by aiperf's formulas, computed here apart.
    #[test]
    fn the_verdict_agrees_with_aiperf_s_rule_over_a_grid() {
        let slo = slo("time_to_first_token:300 inter_token_latency:20 request_latency:3000");
        let mut judged = 0;
        for ttft in [0u64, 150, 300, 301, 900] {
            for latency_extra in [0u64, 100, 1000, 2700, 5000] {
                for tokens in [0u64, 1, 2, 11, 200] {
                    for first in [None, Some(1), Some(3)] {
                        let latency = ttft + latency_extra;
                        let mut request = Served::ok(ms(latency))
                            .time_to_first_token(ms(ttft))
                            .output_tokens(tokens);
                        if let Some(first) = first {
                            request = request.first_chunk_tokens(first);
                        }
                        let decode = match first {
                            Some(f) if f > 0 && f < tokens => tokens - f,
                            _ => tokens.saturating_sub(1),
                        };
                        let itl_ok =
                            tokens >= 2 && (latency_extra as f64) / (decode as f64) <= 20.0;
                        let good = ttft <= 300 && itl_ok && latency <= 3000;
                        assert_eq!(
                            slo.judge(&request).is_good(),
                            good,
                            "ttft {ttft} latency {latency} tokens {tokens} first {first:?}"
                        );
                        judged += 1;
                    }
                }
            }
        }
        assert_eq!(judged, 375);
    }
}
