//! What an objective is, the objectives of one model ([`Slo`]) and of a
//! server ([`Objectives`]).

use std::fmt;
use std::sync::Arc;

/// What an objective bounds: one of aiperf's per-request metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectiveKind {
    /// `time_to_first_token` (ms): the request's start to its first content
    /// chunk.
    TimeToFirstToken,
    /// `inter_token_latency` (ms): (request latency − time to first token) /
    /// (output tokens − the first chunk's tokens).
    InterTokenLatency,
    /// `request_latency` (ms): the request's start to its last content chunk.
    RequestLatency,
    /// `output_token_throughput_per_user` (tokens/s): 1 / inter-token
    /// latency; larger is better.
    OutputTokenThroughputPerUser,
}

impl ObjectiveKind {
    /// Every kind, in the order they are listed in errors and docs.
    pub const ALL: [ObjectiveKind; 4] = [
        ObjectiveKind::TimeToFirstToken,
        ObjectiveKind::InterTokenLatency,
        ObjectiveKind::RequestLatency,
        ObjectiveKind::OutputTokenThroughputPerUser,
    ];

    /// aiperf's tag, the key in the `--goodput` string.
    pub fn key(self) -> &'static str {
        match self {
            ObjectiveKind::TimeToFirstToken => "time_to_first_token",
            ObjectiveKind::InterTokenLatency => "inter_token_latency",
            ObjectiveKind::RequestLatency => "request_latency",
            ObjectiveKind::OutputTokenThroughputPerUser => "output_token_throughput_per_user",
        }
    }

    /// The short name a missed objective is counted under: `ttft`, `itl`,
    /// `e2e` or `tps`.
    pub fn short(self) -> &'static str {
        match self {
            ObjectiveKind::TimeToFirstToken => "ttft",
            ObjectiveKind::InterTokenLatency => "itl",
            ObjectiveKind::RequestLatency => "e2e",
            ObjectiveKind::OutputTokenThroughputPerUser => "tps",
        }
    }

    /// The unit of the target, as aiperf displays it.
    pub fn unit(self) -> &'static str {
        match self {
            ObjectiveKind::OutputTokenThroughputPerUser => "tokens/s",
            _ => "ms",
        }
    }

    /// Whether a larger value is better (the target is a floor).
    pub fn larger_is_better(self) -> bool {
        self == ObjectiveKind::OutputTokenThroughputPerUser
    }

    /// The kind whose aiperf tag is `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.key() == key)
    }
}

/// One objective: a kind and its target, in aiperf's display unit (ms, or
/// tokens/s for `output_token_throughput_per_user`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    /// What it bounds.
    pub kind: ObjectiveKind,
    /// The target, in [`ObjectiveKind::unit`]s: a ceiling, or a floor where
    /// [larger is better](ObjectiveKind::larger_is_better).
    pub target: f64,
}

/// The objectives one request is judged against, in the order given: the
/// first one a request misses is the one it is counted under, as aiperf
/// stops at the first.
///
/// Parse aiperf's `--goodput` string, or build it:
///
/// ```
/// use std::time::Duration;
/// use nemo_lens::slo::Slo;
///
/// let built = Slo::new()
///     .time_to_first_token(Duration::from_millis(300))
///     .request_latency(Duration::from_secs(3));
/// let parsed: Slo = "time_to_first_token:300 request_latency:3000".parse().unwrap();
/// assert_eq!(built, parsed);
/// assert_eq!(built.to_string(), "time_to_first_token:300 request_latency:3000");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slo {
    pub(super) objectives: Vec<Objective>,
}

impl Slo {
    /// No objective yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the objective of `kind`. A target that is not a
    /// positive, finite number is kept out: [`Slo::parse`] refuses it with
    /// an error, and built in code it would judge every request bad.
    #[must_use]
    pub fn with(mut self, kind: ObjectiveKind, target: f64) -> Self {
        if !(target.is_finite() && target > 0.0) {
            return self;
        }
        match self.objectives.iter_mut().find(|o| o.kind == kind) {
            Some(objective) => objective.target = target,
            None => self.objectives.push(Objective { kind, target }),
        }
        self
    }

    /// A ceiling on the time to first token.
    #[must_use]
    pub fn time_to_first_token(self, at_most: std::time::Duration) -> Self {
        self.with(ObjectiveKind::TimeToFirstToken, millis(at_most))
    }

    /// A ceiling on the inter-token latency.
    #[must_use]
    pub fn inter_token_latency(self, at_most: std::time::Duration) -> Self {
        self.with(ObjectiveKind::InterTokenLatency, millis(at_most))
    }

    /// A ceiling on the request latency.
    #[must_use]
    pub fn request_latency(self, at_most: std::time::Duration) -> Self {
        self.with(ObjectiveKind::RequestLatency, millis(at_most))
    }

    /// A floor on the output tokens per second one request gets.
    #[must_use]
    pub fn output_token_throughput_per_user(self, at_least: f64) -> Self {
        self.with(ObjectiveKind::OutputTokenThroughputPerUser, at_least)
    }

    /// The objectives, in the order given.
    pub fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    /// Whether there is no objective.
    pub fn is_empty(&self) -> bool {
        self.objectives.is_empty()
    }
}

fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// aiperf's `--goodput` syntax: `key:value` pairs separated by spaces.
impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, objective) in self.objectives.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}:{}", objective.kind.key(), objective.target)?;
        }
        Ok(())
    }
}

/// The objectives a meter judges requests with: one [`Slo`] for every
/// model, and one per model where a server serves several (a request's
/// model is its `gen_ai.request.model`).
///
/// ```
/// use nemo_lens::slo::{Objectives, Slo};
///
/// let objectives = Objectives::new("time_to_first_token:300".parse::<Slo>().unwrap())
///     .model("llama-70b", "time_to_first_token:800".parse().unwrap());
/// assert_eq!(objectives.for_model(Some("llama-70b")).unwrap().to_string(), "time_to_first_token:800");
/// assert_eq!(objectives.for_model(Some("qwen")).unwrap().to_string(), "time_to_first_token:300");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Objectives {
    every_model: Option<Arc<Slo>>,
    models: Vec<(String, Arc<Slo>)>,
}

impl Objectives {
    /// `slo` for every model (unless one has its own).
    pub fn new(slo: Slo) -> Self {
        Objectives {
            every_model: (!slo.is_empty()).then(|| Arc::new(slo)),
            models: Vec::new(),
        }
    }

    /// No objectives for models without their own (only those named with
    /// [`model`](Self::model) are judged).
    pub fn per_model() -> Self {
        Self::default()
    }

    /// `slo` for requests to `model` (replacing what it had).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>, slo: Slo) -> Self {
        let model = model.into();
        self.models.retain(|(known, _)| *known != model);
        if !slo.is_empty() {
            self.models.push((model, Arc::new(slo)));
        }
        self
    }

    /// The objectives a request to `model` is judged with, if any.
    pub fn for_model(&self, model: Option<&str>) -> Option<&Slo> {
        model
            .and_then(|model| self.models.iter().find(|(known, _)| known == model))
            .map(|(_, slo)| &**slo)
            .or(self.every_model.as_deref())
    }

    /// Whether no request would be judged.
    pub fn is_empty(&self) -> bool {
        self.every_model.is_none() && self.models.is_empty()
    }
}
