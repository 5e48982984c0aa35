//! Waits and deadlines of async calls: on tokio's timer with the `tokio`
//! feature, otherwise on a timer that needs no particular runtime (one
//! background thread for the whole process).
//!
//! Both timers are compiled for the unit tests, which run each one, so
//! `cargo test` checks the timer of builds without `tokio` as well.

use std::future::Future;
use std::time::Duration;

/// The longest wait a timer is asked for: a deadline of `Duration::MAX`
/// means "no deadline worth speaking of", and no clock can count that far.
const LONGEST: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Waits `delay`.
pub(crate) fn sleep(delay: Duration) -> impl Future<Output = ()> {
    #[cfg(feature = "tokio")]
    {
        tokio::time::sleep(delay.min(LONGEST))
    }
    #[cfg(not(feature = "tokio"))]
    {
        shared_thread::sleep(delay)
    }
}

/// What [`within`] returns when the limit passed first.
#[cfg(feature = "tokio")]
pub(crate) type Elapsed = tokio::time::error::Elapsed;
/// What [`within`] returns when the limit passed first.
#[cfg(not(feature = "tokio"))]
pub(crate) type Elapsed = ();

/// The output of `future`, or an error when it did not complete within
/// `limit` (it is then dropped).
///
/// A plain function returning the timer's own future rather than an
/// `async fn`: an `async fn` would keep `future` twice in its state (once
/// as its argument, once inside the timeout), and every call carries that
/// state.
pub(crate) fn within<F: Future>(
    limit: Duration,
    future: F,
) -> impl Future<Output = Result<F::Output, Elapsed>> {
    #[cfg(feature = "tokio")]
    {
        tokio::time::timeout(limit.min(LONGEST), future)
    }
    #[cfg(not(feature = "tokio"))]
    {
        shared_thread::within(limit, future)
    }
}

/// The timer of builds without `tokio`: `futures-timer`'s thread.
#[cfg(any(not(feature = "tokio"), test))]
mod shared_thread {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::Poll;
    use std::time::Duration;

    use super::LONGEST;

    pub(super) async fn sleep(delay: Duration) {
        futures_timer::Delay::new(delay.min(LONGEST)).await;
    }

    pub(super) async fn within<F: Future>(limit: Duration, future: F) -> Result<F::Output, ()> {
        let mut future = std::pin::pin!(future);
        let mut delay = futures_timer::Delay::new(limit.min(LONGEST));
        std::future::poll_fn(|context| {
            if let Poll::Ready(output) = future.as_mut().poll(context) {
                return Poll::Ready(Ok(output));
            }
            match Pin::new(&mut delay).poll(context) {
                Poll::Ready(()) => Poll::Ready(Err(())),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::time::{Duration, Instant};

    type Sleep = fn(Duration) -> Pin<Box<dyn Future<Output = ()>>>;
    type Within = fn(
        Duration,
        Pin<Box<dyn Future<Output = u8>>>,
    ) -> Pin<Box<dyn Future<Output = Option<u8>>>>;

    /// Each timer this build can use: the one calls use, and the shared
    /// thread of builds without `tokio`.
    fn timers() -> [(&'static str, Sleep, Within); 2] {
        [
            (
                "the calls' timer",
                |delay| Box::pin(super::sleep(delay)),
                |limit, future| Box::pin(async move { super::within(limit, future).await.ok() }),
            ),
            (
                "the shared thread",
                |delay| Box::pin(super::shared_thread::sleep(delay)),
                |limit, future| {
                    Box::pin(async move { super::shared_thread::within(limit, future).await.ok() })
                },
            ),
        ]
    }

    #[tokio::test]
    async fn a_wait_lasts_at_least_its_delay() {
        for (timer, sleep, _) in timers() {
            let began = Instant::now();
            sleep(Duration::from_millis(30)).await;
            assert!(began.elapsed() >= Duration::from_millis(30), "{timer}");
        }
    }

    #[tokio::test]
    async fn a_future_past_its_limit_is_dropped() {
        for (timer, sleep, within) in timers() {
            let began = Instant::now();
            let late = within(
                Duration::from_millis(30),
                Box::pin(async move {
                    sleep(Duration::from_secs(30)).await;
                    1
                }),
            )
            .await;
            assert_eq!(late, None, "{timer}");
            assert!(began.elapsed() < Duration::from_secs(5), "{timer}");
            let early = within(Duration::from_secs(30), Box::pin(async { 7 })).await;
            assert_eq!(early, Some(7), "{timer}");
            let unbounded = within(Duration::MAX, Box::pin(async { 8 })).await;
            assert_eq!(unbounded, Some(8), "{timer}");
        }
    }
}
