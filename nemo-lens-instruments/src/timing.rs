//! The arithmetic of one streamed generation, shared by the request guards:
//! when it started, when its first token (or chunk) arrived, how many came,
//! and, for chunks, the gap before each one after the first.

use std::time::Instant;

/// Start, first output and output count of one generation.
///
/// `start` is `None` when the meter records nothing: then no clock is read
/// and every method is a branch.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timing {
    start: Option<Instant>,
    first: Option<Instant>,
    /// Outputs counted so far, meaningful once `counted` is set. Two plain
    /// fields rather than an `Option<u64>`: the per-token update is then one
    /// add and one store of a constant, on the hot path of every stream.
    outputs: u64,
    counted: bool,
    /// The latest output noted with [`Timing::output_at`].
    last: Option<Instant>,
    /// When the last output was produced, if the caller said: time per
    /// output runs to it rather than to the end.
    decoded: Option<Instant>,
    /// Seconds from each output to the next, in order.
    gaps: Vec<f64>,
}

/// What a finished generation measured, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    pub duration_s: f64,
    /// Start to the last output where the caller said when it was produced,
    /// else to the end: aiperf's request latency.
    pub to_last_s: f64,
    /// Start to first output, when one was seen.
    pub to_first_s: Option<f64>,
    /// (last output, else end - first output) / (outputs - 1), when the
    /// first output was seen and at least two were produced.
    pub per_output_s: Option<f64>,
    /// How many outputs were counted, if any were.
    pub outputs: Option<u64>,
    /// The gap before each output after the first, for outputs noted one
    /// by one with [`Timing::output_at`].
    pub gaps: Vec<f64>,
}

impl Timing {
    #[inline]
    pub fn start_at(enabled: bool, at: Instant) -> Self {
        Timing {
            start: enabled.then_some(at),
            ..Timing::default()
        }
    }

    #[inline]
    pub fn is_timing(&self) -> bool {
        self.start.is_some()
    }

    /// Notes the first output at `at`; later calls change nothing.
    #[inline]
    pub fn first_at(&mut self, at: Instant) {
        if self.start.is_some() && self.first.is_none() {
            self.first = Some(at);
        }
    }

    /// Whether the first output was noted.
    #[inline]
    pub fn has_first(&self) -> bool {
        self.first.is_some()
    }

    /// Notes one output at `at`: the first sets the first-output time,
    /// each later one adds its gap since the one before (zero when `at` is
    /// earlier, as with an end before the start).
    #[inline]
    pub fn output_at(&mut self, at: Instant) {
        if self.start.is_none() {
            return;
        }
        match self.last {
            Some(last) => self.gaps.push(seconds(last, at)),
            None => self.first_at(at),
        }
        self.last = Some(at);
        self.add_outputs(1);
    }

    /// Notes that the last output was produced at `at`.
    #[inline]
    pub fn last_at(&mut self, at: Instant) {
        if self.start.is_some() {
            self.decoded = Some(at);
        }
    }

    #[inline]
    pub fn add_outputs(&mut self, n: u64) {
        self.outputs = self.outputs.saturating_add(n);
        self.counted = true;
    }

    #[inline]
    pub fn set_outputs(&mut self, n: u64) {
        self.outputs = n;
        self.counted = true;
    }

    /// The measurements of a generation that ended at `end`; `None` when
    /// nothing is timed (a disabled meter).
    pub fn end_at(&mut self, end: Instant) -> Option<Measured> {
        let start = self.start?;
        let outputs = self.counted.then_some(self.outputs);
        let per_output_s = match (self.first, outputs) {
            (Some(first), Some(n)) if n >= 2 => {
                Some(seconds(first, self.decoded.unwrap_or(end)) / (n - 1) as f64)
            }
            _ => None,
        };
        Some(Measured {
            duration_s: seconds(start, end),
            to_last_s: seconds(start, self.decoded.unwrap_or(end)),
            to_first_s: self.first.map(|first| seconds(start, first)),
            per_output_s,
            outputs,
            gaps: std::mem::take(&mut self.gaps),
        })
    }
}

/// Seconds from `from` to `to`, zero when `to` is earlier.
fn seconds(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ttft_tpot_and_duration_from_instants() {
        let t0 = Instant::now();
        let mut timing = Timing::start_at(true, t0);
        timing.first_at(t0 + Duration::from_millis(20));
        timing.first_at(t0 + Duration::from_millis(30)); // the first call wins
        timing.add_outputs(3);
        timing.add_outputs(2);
        let measured = timing.end_at(t0 + Duration::from_millis(60)).unwrap();
        assert!((measured.duration_s - 0.060).abs() < 1e-9);
        assert!((measured.to_first_s.unwrap() - 0.020).abs() < 1e-9);
        assert!((measured.per_output_s.unwrap() - 0.010).abs() < 1e-9);
    }

    #[test]
    fn no_per_output_time_below_two_outputs_or_without_a_first() {
        let t0 = Instant::now();
        let mut one = Timing::start_at(true, t0);
        one.first_at(t0);
        one.set_outputs(1);
        assert_eq!(one.end_at(t0).unwrap().per_output_s, None);
        let mut unseen = Timing::start_at(true, t0);
        unseen.set_outputs(10);
        let measured = unseen.end_at(t0 + Duration::from_secs(1)).unwrap();
        assert_eq!((measured.to_first_s, measured.per_output_s), (None, None));
    }

    #[test]
    fn outputs_noted_one_by_one_give_a_gap_each_after_the_first() {
        let t0 = Instant::now();
        let mut timing = Timing::start_at(true, t0);
        for ms in [10, 30, 100] {
            timing.output_at(t0 + Duration::from_millis(ms));
        }
        let measured = timing.end_at(t0 + Duration::from_millis(120)).unwrap();
        assert!((measured.to_first_s.unwrap() - 0.010).abs() < 1e-9);
        assert_eq!(measured.outputs, Some(3));
        assert_eq!(measured.gaps.len(), 2);
        assert!((measured.gaps[0] - 0.020).abs() < 1e-9);
        assert!((measured.gaps[1] - 0.070).abs() < 1e-9);
    }

    #[test]
    fn an_end_before_the_start_is_zero_not_a_panic() {
        let t0 = Instant::now();
        let mut late = Timing::start_at(true, t0 + Duration::from_secs(1));
        assert_eq!(late.end_at(t0).unwrap().duration_s, 0.0);
    }

    #[test]
    fn a_disabled_timing_reads_no_clock_and_measures_nothing() {
        let mut timing = Timing::start_at(false, Instant::now());
        timing.first_at(Instant::now());
        timing.output_at(Instant::now());
        assert!(!timing.has_first());
        assert_eq!(timing.end_at(Instant::now()), None);
    }
}
