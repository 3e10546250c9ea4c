//! Retries with back-off for the gRPC exporter nemo-lens sends with: the
//! schedule and the rules opentelemetry-otlp 0.33 applies to its own
//! exporters (and so to the HTTP one, given the same policy), so both
//! protocols behave alike: retryable codes per the OTLP specification, a
//! server's `RetryInfo` honoured (capped at 30 s), exponential back-off with
//! jitter, and one deadline, the export timeout, for every attempt.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

/// Retries after the first attempt.
pub(super) const MAX_RETRIES: usize = 2;
/// The first back-off.
pub(super) const INITIAL_DELAY: Duration = Duration::from_millis(100);
/// The longest back-off, unless a server asks for longer.
pub(super) const MAX_DELAY: Duration = Duration::from_millis(500);
/// Random time added to each back-off, at most.
pub(super) const MAX_JITTER: Duration = Duration::from_millis(100);
/// The longest a server's `RetryInfo` is waited for.
const MAX_THROTTLE: Duration = Duration::from_secs(30);

/// Whether and when a failed attempt is tried again.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Retry {
    Never,
    Backoff,
    After(Duration),
}

/// The OTLP specification's rules for a gRPC status.
fn classify(status: &tonic::Status) -> Retry {
    use tonic::Code;
    use tonic_types::StatusExt as _;
    let delay = status
        .get_details_retry_info()
        .and_then(|info| info.retry_delay)
        .map(|d| d.min(Duration::from_secs(600)));
    match status.code() {
        Code::ResourceExhausted => delay.map_or(Retry::Never, Retry::After),
        Code::Unavailable => match delay.filter(|d| !d.is_zero()) {
            Some(delay) => Retry::After(delay),
            None => Retry::Backoff,
        },
        Code::Cancelled
        | Code::DeadlineExceeded
        | Code::Aborted
        | Code::OutOfRange
        | Code::DataLoss => Retry::Backoff,
        _ => Retry::Never,
    }
}

fn jitter() -> Duration {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    let max = MAX_JITTER.as_millis() as u64;
    Duration::from_millis(hasher.finish() % (max + 1))
}

/// Runs `attempt` until it succeeds, fails for good, runs out of retries or
/// would outlast `deadline`; the last error otherwise.
pub(super) async fn with_backoff<F, Fut>(
    deadline: Duration,
    mut attempt: F,
) -> Result<(), tonic::Status>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), tonic::Status>>,
{
    let start = Instant::now();
    let mut retries = 0;
    let mut delay = INITIAL_DELAY;
    let mut cap = MAX_DELAY;
    loop {
        let Err(status) = attempt().await else {
            return Ok(());
        };
        if start.elapsed() >= deadline || retries >= MAX_RETRIES {
            return Err(status);
        }
        match classify(&status) {
            Retry::Never => return Err(status),
            Retry::Backoff => {}
            Retry::After(asked) => {
                let asked = asked.min(MAX_THROTTLE);
                if asked > cap {
                    cap = MAX_THROTTLE;
                }
                delay = delay.max(asked);
            }
        }
        retries += 1;
        let sleep = (delay + jitter()).min(cap);
        if sleep >= deadline.saturating_sub(start.elapsed()) {
            return Err(status);
        }
        // The periodic reader's own thread: no runtime to yield to.
        std::thread::sleep(sleep);
        delay = delay.saturating_mul(2).min(cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_otlp_specification() {
        use tonic::{Code, Status};
        assert_eq!(
            classify(&Status::new(Code::Unavailable, "")),
            Retry::Backoff
        );
        assert_eq!(
            classify(&Status::new(Code::Unauthenticated, "")),
            Retry::Never
        );
        assert_eq!(
            classify(&Status::new(Code::ResourceExhausted, "")),
            Retry::Never
        );
        assert_eq!(classify(&Status::new(Code::Aborted, "")), Retry::Backoff);
        let throttled = <Status as tonic_types::StatusExt>::with_error_details(
            Code::ResourceExhausted,
            "slow down",
            tonic_types::ErrorDetails::with_retry_info(Some(Duration::from_secs(2))),
        );
        assert_eq!(classify(&throttled), Retry::After(Duration::from_secs(2)));
    }

    #[test]
    fn a_failure_for_good_is_not_retried_and_a_retryable_one_is_retried_twice() {
        let mut attempts = 0;
        let result = block_on(with_backoff(Duration::from_secs(5), || {
            attempts += 1;
            async { Err(tonic::Status::unauthenticated("no")) }
        }));
        assert_eq!(
            (result.unwrap_err().code(), attempts),
            (tonic::Code::Unauthenticated, 1)
        );
        let mut attempts = 0;
        let begun = Instant::now();
        let result = block_on(with_backoff(Duration::from_secs(5), || {
            attempts += 1;
            async { Err(tonic::Status::unavailable("down")) }
        }));
        assert_eq!(
            (result.unwrap_err().code(), attempts),
            (tonic::Code::Unavailable, 3)
        );
        // 100 ms then 200 ms, each plus at most 100 ms of jitter.
        assert!(
            begun.elapsed() >= Duration::from_millis(300),
            "{:?}",
            begun.elapsed()
        );
    }

    /// Polls a future whose attempts never wait on I/O.
    fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(future)
    }
}
