//! Per-tenant request rate: a token bucket per tenant, so one noisy tenant cannot take the
//! server's time from the others (`limits.requests_per_second`, `limits.request_burst`).
//!
//! A bucket holds up to `burst` requests and refills at `rate` per second; a request takes one,
//! and a request that finds none is refused with the time until one is back (`Retry-After`).
//! The check is pure arithmetic over the times it is given, so tests drive it with their own
//! clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mnemo::core::TenantId;

/// Tenants tracked before full buckets are forgotten: a tenant whose bucket is full is the same
/// as one never seen, so dropping those keeps the map to the tenants active lately (never more
/// than the tenants with keys) without changing any answer.
const TRACKED: usize = 10_000;

/// The buckets of every tenant that sent a request lately.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<TenantId, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// A limiter refilling `rate` requests per second up to `burst`; `None` for a rate of 0 (no
    /// limit), so the request path pays nothing when none is set.
    pub fn new(rate: f64, burst: usize) -> Option<Self> {
        (rate > 0.0 && rate.is_finite()).then(|| Self {
            rate,
            burst: burst.max(1) as f64,
            buckets: Mutex::new(HashMap::new()),
        })
    }

    /// Takes one request from `tenant`'s bucket at `now`, or says how long until one is back.
    pub fn check(&self, tenant: &TenantId, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= TRACKED && !buckets.contains_key(tenant) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| refilled(*b, now, rate, burst) < burst);
        }
        let bucket = buckets.entry(tenant.clone()).or_insert(Bucket { tokens: self.burst, at: now });
        let tokens = refilled(*bucket, now, self.rate, self.burst);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now.max(bucket.at) };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now.max(bucket.at) };
            Err(Duration::from_secs_f64((1.0 - tokens) / self.rate))
        }
    }
}

/// The bucket's tokens at `now`: what it held plus the refill since, at most `burst`. A time
/// before the bucket's own (clocks are monotonic, but callers may race) refills nothing.
fn refilled(b: Bucket, now: Instant, rate: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
    (b.tokens + elapsed * rate).min(burst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tenant(t: &str) -> TenantId {
        TenantId::new(t).unwrap()
    }

    #[test]
    fn a_rate_of_zero_sets_no_limit() {
        assert!(RateLimiter::new(0.0, 10).is_none());
        assert!(RateLimiter::new(f64::NAN, 10).is_none());
    }

    #[test]
    fn a_burst_passes_then_the_next_request_waits_for_its_token() {
        let limiter = RateLimiter::new(2.0, 3).unwrap();
        let t0 = Instant::now();
        let acme = tenant("acme");
        for _ in 0..3 {
            assert!(limiter.check(&acme, t0).is_ok());
        }
        let wait = limiter.check(&acme, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        // Half a second later one token is back, and only one.
        let later = t0 + Duration::from_millis(500);
        assert!(limiter.check(&acme, later).is_ok());
        assert!(limiter.check(&acme, later).is_err());
    }

    #[test]
    fn one_tenant_spending_its_bucket_leaves_the_others_theirs() {
        let limiter = RateLimiter::new(1.0, 2).unwrap();
        let t0 = Instant::now();
        let (acme, globex) = (tenant("acme"), tenant("globex"));
        while limiter.check(&acme, t0).is_ok() {}
        assert!(limiter.check(&globex, t0).is_ok());
        assert!(limiter.check(&globex, t0).is_ok());
        assert!(limiter.check(&globex, t0).is_err());
    }

    #[test]
    fn forgetting_full_buckets_bounds_the_map_and_keeps_spent_ones() {
        let limiter = RateLimiter::new(1.0, 1).unwrap();
        let t0 = Instant::now();
        let spent = tenant("spent");
        assert!(limiter.check(&spent, t0).is_ok());
        for i in 0..TRACKED {
            let _ = limiter.check(&tenant(&format!("t{i}")), t0 - Duration::from_secs(10));
        }
        // At the limit, one more tenant forgets every bucket that is full again by now.
        let _ = limiter.check(&tenant("one-more"), t0);
        let n = limiter.buckets.lock().unwrap().len();
        assert!(n <= 3, "{n} buckets kept");
        assert!(limiter.check(&spent, t0).is_err(), "a spent bucket is not forgotten");
    }

    proptest! {
        /// Over any run of request times, no tenant gets more than `burst + rate·elapsed`
        /// requests through, and a refused request is told a wait within one token's time.
        #[test]
        fn never_more_than_the_burst_plus_the_refill(
            rate in 0.5f64..50.0,
            burst in 1usize..20,
            gaps_ms in proptest::collection::vec(0u64..200, 1..200),
        ) {
            let limiter = RateLimiter::new(rate, burst).unwrap();
            let t0 = Instant::now();
            let acme = tenant("acme");
            let (mut now, mut passed) = (t0, 0usize);
            for gap in gaps_ms {
                now += Duration::from_millis(gap);
                match limiter.check(&acme, now) {
                    Ok(()) => passed += 1,
                    Err(wait) => prop_assert!(wait.as_secs_f64() <= 1.0 / rate + 1e-9),
                }
                let allowed = burst as f64 + rate * (now - t0).as_secs_f64();
                prop_assert!(passed as f64 <= allowed + 1e-9, "{passed} passed, {allowed} allowed");
            }
        }
    }
}
