//! Which series end when idle, and after how long: one timeout for every
//! series, and rules for the attribute keys, instruments and sets whose
//! series come and go.

use std::time::Duration;

use opentelemetry::{Key, KeyValue};

use crate::Instruments;

/// Which owned series end once idle, and after how long.
///
/// A gateway's per-backend series should end when a backend leaves, while
/// its own request series stay however quiet the service is (a series
/// that ends leaves `/metrics`, and a dashboard or `nemo-lens top` reads
/// it as absent, not as zero). So the timeout can be scoped: to series
/// carrying an attribute key (`server.address`: one series per backend),
/// to instruments by name or name prefix, or to the instruments of a set.
///
/// A series takes the timeout of the first rule it matches, in the order
/// the rules were added; a series no rule matches takes the timeout of
/// [`after`](Self::after) (`NEMO_LENS_SERIES_IDLE_TIMEOUT`), or never
/// ends. A zero timeout means never: a rule can keep series that a
/// process-wide timeout would end.
///
/// ```
/// use std::time::Duration;
/// use nemo_lens::opentelemetry::KeyValue;
/// use nemo_lens::SeriesExpiry;
///
/// // Per-backend series end after a minute idle; nothing else ends.
/// let expiry = SeriesExpiry::never().carrying("server.address", Duration::from_secs(60));
/// let backend = [KeyValue::new("server.address", "10.0.0.7:8000")];
/// assert_eq!(
///     expiry.timeout_of("gen_ai.client.operation.duration", &backend),
///     Some(Duration::from_secs(60))
/// );
/// assert_eq!(expiry.timeout_of("gen_ai.server.request.duration", &[]), None);
///
/// // Everything ends after five minutes idle, except the service's own
/// // request series.
/// let expiry = SeriesExpiry::after(Duration::from_secs(300))
///     .instrument("gen_ai.server.*", Duration::ZERO);
/// assert_eq!(expiry.timeout_of("gen_ai.server.request.duration", &[]), None);
/// assert_eq!(
///     expiry.timeout_of("router.upstream.requests", &backend),
///     Some(Duration::from_secs(300))
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesExpiry {
    rules: Vec<Rule>,
    otherwise: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    on: Selector,
    timeout: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq)]
enum Selector {
    /// Series whose attributes carry the key.
    Key(Key),
    /// Instruments by name, compared without case as the SDK compares
    /// them; a trailing `*` matches every name it starts.
    Instrument { name: String, prefix: bool },
}

impl Selector {
    fn instrument(name: &str) -> Selector {
        let name = name.to_ascii_lowercase();
        match name.strip_suffix('*') {
            Some(prefix) => Selector::Instrument {
                name: prefix.to_owned(),
                prefix: true,
            },
            None => Selector::Instrument {
                name,
                prefix: false,
            },
        }
    }

    /// Whether it names `instrument` (lower case); key selectors name none.
    fn names(&self, instrument: &str) -> bool {
        match self {
            Selector::Key(_) => false,
            Selector::Instrument { name, prefix: true } => instrument.starts_with(name.as_str()),
            Selector::Instrument {
                name,
                prefix: false,
            } => instrument == name,
        }
    }
}

fn nonzero(timeout: Duration) -> Option<Duration> {
    Some(timeout).filter(|t| !t.is_zero())
}

impl SeriesExpiry {
    /// No series ends by itself (the default).
    pub fn never() -> Self {
        Self::default()
    }

    /// Every series ends once idle for `timeout` (zero: never), unless a
    /// rule says otherwise: what `NEMO_LENS_SERIES_IDLE_TIMEOUT` sets.
    pub fn after(timeout: Duration) -> Self {
        SeriesExpiry {
            rules: Vec::new(),
            otherwise: nonzero(timeout),
        }
    }

    /// Series whose attributes carry `key` end once idle for `timeout`
    /// (zero: never): one series per backend, per model, per tenant.
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::SeriesExpiry;
    ///
    /// let expiry = SeriesExpiry::never()
    ///     .carrying("server.address", Duration::from_secs(60))
    ///     .carrying("gen_ai.request.model", Duration::from_secs(15 * 60));
    /// ```
    pub fn carrying(mut self, key: impl Into<Key>, timeout: Duration) -> Self {
        self.rules.push(Rule {
            on: Selector::Key(key.into()),
            timeout: nonzero(timeout),
        });
        self
    }

    /// The series of the instrument `name` end once idle for `timeout`
    /// (zero: never); `name` ending in `*` names every instrument whose
    /// name it starts (`"router.upstream.*"`). Names compare without case.
    pub fn instrument(mut self, name: &str, timeout: Duration) -> Self {
        self.rules.push(Rule {
            on: Selector::instrument(name),
            timeout: nonzero(timeout),
        });
        self
    }

    /// The series of every instrument the set `S` declares end once idle
    /// for `timeout` (zero: never).
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::instruments::ModelCallMetrics;
    /// use nemo_lens::SeriesExpiry;
    ///
    /// // A gateway's calls to its backends (`ModelCall`) end a minute after
    /// // a backend leaves; its own request series stay.
    /// let expiry = SeriesExpiry::never().set::<ModelCallMetrics>(Duration::from_secs(60));
    /// assert_eq!(
    ///     expiry.timeout_of("gen_ai.client.operation.duration", &[]),
    ///     Some(Duration::from_secs(60))
    /// );
    /// assert_eq!(expiry.timeout_of("gen_ai.server.request.duration", &[]), None);
    /// ```
    pub fn set<S: Instruments>(mut self, timeout: Duration) -> Self {
        for descriptor in S::DESCRIPTORS {
            let on = Selector::instrument(descriptor.name);
            if !self.rules.iter().any(|rule| rule.on == on) {
                self.rules.push(Rule {
                    on,
                    timeout: nonzero(timeout),
                });
            }
        }
        self
    }

    /// How long a series of `instrument` with `attributes` may go
    /// unrecorded before it ends; `None`: it never ends by itself.
    pub fn timeout_of(&self, instrument: &str, attributes: &[KeyValue]) -> Option<Duration> {
        self.for_instrument(instrument).timeout_of(attributes)
    }

    /// The timeout of series no rule names (`None`: they never end).
    pub fn otherwise(&self) -> Option<Duration> {
        self.otherwise
    }

    /// Whether no series can end by itself.
    pub fn is_never(&self) -> bool {
        self.shortest().is_none()
    }

    /// The shortest timeout of any series: what holders of bound handles
    /// are swept with (a handle let go early is only looked up again).
    pub fn shortest(&self) -> Option<Duration> {
        self.rules
            .iter()
            .filter_map(|rule| rule.timeout)
            .chain(self.otherwise)
            .min()
    }

    /// The rules that can apply to `instrument`'s series, resolved once
    /// when the instrument is made: the key rules before the first rule
    /// naming it, then that rule's timeout (else the default).
    pub(crate) fn for_instrument(&self, instrument: &str) -> Resolved {
        let instrument = instrument.to_ascii_lowercase();
        let mut keyed = Vec::new();
        for rule in &self.rules {
            match &rule.on {
                Selector::Key(key) => keyed.push((key.clone(), rule.timeout)),
                on if on.names(&instrument) => {
                    return Resolved::new(keyed, rule.timeout);
                }
                Selector::Instrument { .. } => {}
            }
        }
        Resolved::new(keyed, self.otherwise)
    }
}

/// [`SeriesExpiry`] for one instrument: what its series map checks when a
/// series is made.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolved {
    keyed: Box<[(Key, Option<Duration>)]>,
    otherwise: Option<Duration>,
    may_end: bool,
}

impl Resolved {
    fn new(keyed: Vec<(Key, Option<Duration>)>, otherwise: Option<Duration>) -> Self {
        let may_end = otherwise.is_some() || keyed.iter().any(|(_, t)| t.is_some());
        Resolved {
            keyed: keyed.into(),
            otherwise,
            may_end,
        }
    }

    /// The timeout of a series with `attributes`.
    pub(crate) fn timeout_of(&self, attributes: &[KeyValue]) -> Option<Duration> {
        self.keyed
            .iter()
            .find(|(key, _)| attributes.iter().any(|kv| kv.key == *key))
            .map_or(self.otherwise, |(_, timeout)| *timeout)
    }

    /// Whether any series of the instrument can end by itself.
    pub(crate) fn may_end(&self) -> bool {
        self.may_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn backend() -> [KeyValue; 2] {
        [
            KeyValue::new("gen_ai.request.model", "llama"),
            KeyValue::new("server.address", "10.0.0.7:8000"),
        ]
    }

    #[test]
    fn the_first_rule_a_series_matches_decides() {
        let expiry = SeriesExpiry::after(10 * MINUTE)
            .instrument("gen_ai.server.request.duration", Duration::ZERO)
            .carrying("server.address", MINUTE)
            .instrument("router.*", 2 * MINUTE);
        // The instrument rule comes before the key rule.
        assert_eq!(
            expiry.timeout_of("gen_ai.server.request.duration", &backend()),
            None
        );
        // The key rule comes before the prefix rule.
        assert_eq!(
            expiry.timeout_of("router.upstream.requests", &backend()),
            Some(MINUTE)
        );
        assert_eq!(
            expiry.timeout_of("Router.Upstream.Requests", &[]),
            Some(2 * MINUTE)
        );
        assert_eq!(expiry.timeout_of("app.jobs", &[]), Some(10 * MINUTE));
        assert_eq!(expiry.shortest(), Some(MINUTE));
    }

    #[test]
    fn never_and_zero_end_nothing() {
        assert!(SeriesExpiry::never().is_never());
        assert!(SeriesExpiry::after(Duration::ZERO).is_never());
        let kept = SeriesExpiry::never().carrying("server.address", Duration::ZERO);
        assert!(kept.is_never());
        assert!(!kept.for_instrument("x").may_end());
        let scoped = SeriesExpiry::never().carrying("server.address", MINUTE);
        assert!(scoped.for_instrument("x").may_end());
        assert_eq!(scoped.timeout_of("x", &[]), None);
    }
}
