//! Waits and deadlines of async calls: on tokio's timer with the `tokio`
//! feature, otherwise on a timer that needs no particular runtime (one
//! background thread for the whole process).

use std::future::Future;
use std::time::Duration;

/// The longest wait a timer is asked for: a deadline of `Duration::MAX`
/// means "no deadline worth speaking of", and no clock can count that far.
const LONGEST: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Waits `delay`.
pub(crate) async fn sleep(delay: Duration) {
    #[cfg(feature = "tokio")]
    tokio::time::sleep(delay.min(LONGEST)).await;
    #[cfg(not(feature = "tokio"))]
    futures_timer::Delay::new(delay.min(LONGEST)).await;
}

/// The output of `future`, or `None` when it did not complete within
/// `limit` (it is then dropped).
pub(crate) async fn within<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
    #[cfg(feature = "tokio")]
    {
        tokio::time::timeout(limit.min(LONGEST), future).await.ok()
    }
    #[cfg(not(feature = "tokio"))]
    {
        use std::pin::Pin;
        use std::task::Poll;

        let mut future = std::pin::pin!(future);
        let mut delay = futures_timer::Delay::new(limit.min(LONGEST));
        std::future::poll_fn(|context| {
            if let Poll::Ready(output) = future.as_mut().poll(context) {
                return Poll::Ready(Some(output));
            }
            match Pin::new(&mut delay).poll(context) {
                Poll::Ready(()) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn a_wait_lasts_at_least_its_delay() {
        let began = Instant::now();
        sleep(Duration::from_millis(30)).await;
        assert!(began.elapsed() >= Duration::from_millis(30));
    }

    #[tokio::test]
    async fn a_future_past_its_limit_is_dropped() {
        let began = Instant::now();
        let late = within(Duration::from_millis(30), sleep(Duration::from_secs(30))).await;
        assert_eq!(late, None);
        assert!(began.elapsed() < Duration::from_secs(5));
        let early = within(Duration::from_secs(30), async { 7 }).await;
        assert_eq!(early, Some(7));
        let unbounded = within(Duration::MAX, async { 8 }).await;
        assert_eq!(unbounded, Some(8));
    }
}
