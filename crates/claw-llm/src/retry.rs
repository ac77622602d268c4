//! When and how long to wait before retrying a failed LLM request.
//!
//! Only requests that failed before any content streamed are retried: connection
//! failures, HTTP 408/429/500/502/503/504/529 and an Anthropic `overloaded_error` event.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// HTTP statuses worth retrying: timeouts, rate limits, server errors, Anthropic overload.
pub const RETRYABLE_STATUSES: &[u16] = &[408, 429, 500, 502, 503, 504, 529];

/// How many retries, and how long to wait between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// The first backoff; each later one doubles it (1 s, 2 s, 4 s by default).
    pub base_delay: Duration,
    /// Upper bound of a computed backoff.
    pub max_delay: Duration,
    /// Upper bound of a wait asked for by the server (`retry-after`).
    pub max_retry_after: Duration,
    /// Retries of a rate-limited request (HTTP 429): more than of a failure, since a
    /// rate limit passes with time (a burst of parallel agents hits it for minutes).
    pub rate_limit_retries: u32,
    /// The most a rate-limited request waits in all before it is given up.
    pub rate_limit_budget: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            rate_limit_retries: 10,
            rate_limit_budget: Duration::from_secs(5 * 60),
        }
    }
}

impl RetryPolicy {
    /// The default policy with another base delay (tests use a few milliseconds).
    pub fn with_base_delay(base_delay: Duration) -> Self {
        Self {
            base_delay,
            ..Self::default()
        }
    }

    /// The wait before retry `attempt` (1-based): the server's `retry-after` when given
    /// (capped by `max_retry_after`), else exponential backoff with up to 25 % jitter so
    /// that many clients do not retry in lockstep.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        let backoff = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let jitter = backoff.mul_f64(fastrand::f64() * 0.25);
        backoff + jitter
    }

    /// Whether retry `attempt` (1-based) may wait `delay` more, `waited` having been
    /// waited already: within the retries of its kind (a rate limit has more), and for a
    /// rate limit within its budget of time.
    pub fn allows(
        &self,
        attempt: u32,
        rate_limited: bool,
        waited: Duration,
        delay: Duration,
    ) -> bool {
        if rate_limited {
            attempt <= self.rate_limit_retries && waited + delay <= self.rate_limit_budget
        } else {
            attempt <= self.max_retries
        }
    }

    /// How many retries a failure of this kind gets at most.
    pub fn retries_for(&self, rate_limited: bool) -> u32 {
        if rate_limited {
            self.rate_limit_retries
        } else {
            self.max_retries
        }
    }
}

/// Whether an HTTP status is worth retrying.
pub fn is_retryable_status(status: u16) -> bool {
    RETRYABLE_STATUSES.contains(&status)
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `retry-after` as
/// seconds or an HTTP date. Unparsable values are ignored (backoff applies).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// Parses a `retry-after` value (delta seconds or an IMF-fixdate) relative to `now`;
/// a date in the past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = parse_http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an HTTP date such as `Wed, 21 Oct 2015 07:28:00 GMT`
/// (the `httpdate` crate's reading: IMF-fixdate and the two obsolete forms).
fn parse_http_date(value: &str) -> Option<u64> {
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(UNIX_EPOCH).ok()?.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 2015-10-21 07:27:50 GMT
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        // A date already past means "retry now", never a negative or huge wait.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(
            parse_retry_after("Wed, 32 Oct 2015 07:28:00 GMT", now),
            None
        );
    }

    #[test]
    fn http_dates_match_known_epochs() {
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        // The obsolete forms RFC 9110 says a recipient should still take.
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1994"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
    }

    #[test]
    fn header_precedence() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
    }

    #[test]
    fn backoff_doubles_with_bounded_jitter_and_caps() {
        let policy = RetryPolicy::default();
        for (attempt, base) in [(1u32, 1000u64), (2, 2000), (3, 4000)] {
            for _ in 0..50 {
                let ms = u64::try_from(policy.delay(attempt, None).as_millis()).unwrap();
                assert!(
                    (base..=base + base / 4).contains(&ms),
                    "attempt {attempt}: {ms}"
                );
            }
        }
        let late = policy.delay(12, None);
        assert!(late >= policy.max_delay && late <= policy.max_delay.mul_f64(1.25));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3600))),
            policy.max_retry_after
        );
    }

    #[test]
    fn retryable_statuses() {
        for status in [408, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }
}
