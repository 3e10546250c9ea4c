//! [`ScheduledRequest`]: one request through an engine's scheduler.

use std::time::Instant;

use nemo_lens_core::{Instruments, Meter, MeterLease};

use super::metrics::{FinishReason, SchedulingMetrics};

/// Where a request is in the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Waiting,
    Running,
    Left,
}

/// One request through an engine's scheduler: it adds itself to the waiting
/// gauge when queued, moves to the running gauge when it starts, and leaves
/// both when it finishes, records the queue, prefill and decode times, and
/// counts itself by [`FinishReason`].
///
/// The gauges stay right however the request ends. Dropped unfinished (its
/// task cancelled because the client went away, the engine overloaded and
/// shedding work, a `?` returning early) it leaves the gauge it was in and
/// counts as [`FinishReason::Abort`]; dropped while a panic unwinds, as
/// [`FinishReason::Error`]. Each method that reads the clock has an `_at`
/// twin taking an [`Instant`]; on a meter that records nothing, none reads
/// the clock.
///
/// ```
/// use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest};
/// use nemo_lens::Meter;
///
/// let meter = Meter::noop();
/// let mut request = ScheduledRequest::queued(&meter); // waiting + 1
/// request.prefix_cache(512, 384);                      // prompt tokens looked up, found
/// request.start();                                     // waiting - 1, running + 1, queue time
/// request.first_token();                               // prefill time
/// request.finish(FinishReason::Length);                // running - 1, decode time, finished{length}
/// ```
#[derive(Debug)]
#[must_use = "a request leaves the gauges when it is finished or dropped"]
pub struct ScheduledRequest {
    meter: MeterLease,
    stage: Stage,
    /// When it was queued, then when it started, then when its first token
    /// came: the start of the stage being timed. `None` when not timing.
    mark: Option<Instant>,
    /// Whether the first token was noted (the decode is timed from it).
    first_token: bool,
}

impl ScheduledRequest {
    /// Queues a request now: the waiting gauge counts it.
    pub fn queued(meter: &Meter) -> Self {
        let now = meter.is_enabled().then(Instant::now);
        Self::queue(meter, now)
    }

    /// Queues a request that arrived at `at`.
    pub fn queued_at(meter: &Meter, at: Instant) -> Self {
        Self::queue(meter, meter.is_enabled().then_some(at))
    }

    fn queue(meter: &Meter, mark: Option<Instant>) -> Self {
        SchedulingMetrics::default()
            .requests_waiting(1)
            .record(meter);
        ScheduledRequest {
            meter: meter.lease(),
            stage: Stage::Waiting,
            mark,
            first_token: false,
        }
    }

    /// Records the request's prefix-cache look-up: `queried` prompt tokens
    /// looked up, `hits` of them found.
    pub fn prefix_cache(&self, queried: u64, hits: u64) {
        SchedulingMetrics::default()
            .prefix_cache_queries(queried)
            .prefix_cache_hits(hits)
            .record(&self.meter);
    }

    /// The request starts running now: it moves from the waiting gauge to
    /// the running one, and its queue time is recorded. Later calls change
    /// nothing.
    pub fn start(&mut self) {
        let now = self.now();
        self.start_from(now);
    }

    /// The request started running at `at`.
    pub fn start_at(&mut self, at: Instant) {
        self.start_from(self.mark.map(|_| at));
    }

    fn start_from(&mut self, now: Option<Instant>) {
        if self.stage != Stage::Waiting {
            return;
        }
        self.stage = Stage::Running;
        SchedulingMetrics {
            requests_waiting: Some(-1),
            requests_running: Some(1),
            queue_s: self.lap(now),
            ..SchedulingMetrics::default()
        }
        .record(&self.meter);
    }

    /// The request's first token came now, ending its prefill; later calls
    /// (and calls before [`start`](Self::start)) change nothing.
    pub fn first_token(&mut self) {
        if self.stage == Stage::Running && !self.first_token {
            let now = self.now();
            self.first_token_from(now);
        }
    }

    /// The request's first token came at `at`.
    pub fn first_token_at(&mut self, at: Instant) {
        self.first_token_from(self.mark.map(|_| at));
    }

    fn first_token_from(&mut self, now: Option<Instant>) {
        if self.stage != Stage::Running || self.first_token {
            return;
        }
        self.first_token = true;
        if let Some(prefill_s) = self.lap(now) {
            SchedulingMetrics::default()
                .prefill_s(prefill_s)
                .record(&self.meter);
        }
    }

    /// The request leaves the engine now for `reason`.
    pub fn finish(mut self, reason: FinishReason) {
        let now = self.now();
        self.leave(now, reason);
    }

    /// The request left the engine at `at` for `reason`.
    pub fn finish_at(mut self, reason: FinishReason, at: Instant) {
        let at = self.mark.map(|_| at);
        self.leave(at, reason);
    }

    /// Leaves whichever gauge the request is in, records its decode time
    /// when it had a first token, and counts it.
    fn leave(&mut self, now: Option<Instant>, reason: FinishReason) {
        let stage = std::mem::replace(&mut self.stage, Stage::Left);
        let decode_s = match stage {
            Stage::Running if self.first_token => self.lap(now),
            _ => None,
        };
        SchedulingMetrics {
            requests_waiting: (stage == Stage::Waiting).then_some(-1),
            requests_running: (stage == Stage::Running).then_some(-1),
            decode_s,
            finished: (stage != Stage::Left).then_some(1),
            finish_reason: Some(reason),
            ..SchedulingMetrics::default()
        }
        .record(&self.meter);
    }

    /// `Instant::now()` when timing.
    fn now(&self) -> Option<Instant> {
        self.mark.map(|_| Instant::now())
    }

    /// Seconds from the current mark to `now`, which becomes the mark.
    fn lap(&mut self, now: Option<Instant>) -> Option<f64> {
        let (mark, now) = (self.mark?, now?);
        self.mark = Some(now);
        Some(now.saturating_duration_since(mark).as_secs_f64())
    }
}

impl Drop for ScheduledRequest {
    fn drop(&mut self) {
        if self.stage == Stage::Left {
            return;
        }
        let reason = if std::thread::panicking() {
            FinishReason::Error
        } else {
            FinishReason::Abort
        };
        // No clock reading, so no decode time: an unfinished generation is
        // not a decode.
        self.leave(None, reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_meter_reads_no_clock_and_keeps_every_path_safe() {
        let meter = Meter::noop();
        let mut request = ScheduledRequest::queued(&meter);
        assert_eq!(request.mark, None);
        request.start();
        request.first_token();
        request.finish(FinishReason::Stop);
        drop(ScheduledRequest::queued(&meter));
    }
}
