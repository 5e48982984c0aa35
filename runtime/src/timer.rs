//! Waits and deadlines of async calls: on tokio's timer with the `tokio`
//! feature, otherwise on a timer that needs no particular runtime (one
//! background thread for the whole process).
//!
//! Both timers are compiled for the unit tests, which run each one, so
//! `cargo test` checks the timer of builds without `tokio` as well.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elapsed;

/// The output of `future`, or an error when it did not complete within
/// `limit` (it is then dropped).
///
/// A plain function returning the deadline's future rather than an
/// `async fn`: an `async fn` would keep `future` twice in its state (once
/// as its argument, once inside the deadline), and every call carries that
/// state.
pub(crate) fn within<F: Future>(
    limit: Duration,
    future: F,
) -> impl Future<Output = Result<F::Output, Elapsed>> {
    #[cfg(feature = "tokio")]
    {
        Deadline::new(future, tokio::time::sleep(limit.min(LONGEST)))
    }
    #[cfg(not(feature = "tokio"))]
    {
        Deadline::new(future, shared_thread::delay(limit))
    }
}

/// A timer a [`Deadline`] can end its future with.
trait Alarm: Future<Output = ()> {
    /// Whether the alarm went off, asked without polling it; `None` when
    /// only a poll can tell.
    fn went_off(self: Pin<&mut Self>) -> Option<bool>;
}

#[cfg(feature = "tokio")]
impl Alarm for tokio::time::Sleep {
    fn went_off(self: Pin<&mut Self>) -> Option<bool> {
        Some(self.is_elapsed())
    }
}

#[cfg(any(not(feature = "tokio"), test))]
impl Alarm for futures_timer::Delay {
    fn went_off(self: Pin<&mut Self>) -> Option<bool> {
        None
    }
}

pin_project_lite::pin_project! {
    /// `future`, ended by `alarm` if that goes off first. Built in place,
    /// it spares the call's future the moves of a wrapping `async fn` or
    /// of `tokio::time::timeout` (about 120 instructions a call in all).
    ///
    /// tokio's `Timeout` polls its timer each time the future returns
    /// pending. This one polls the alarm (which arms it and gives it the
    /// waker) only when the task's waker is not the one the alarm holds:
    /// on the first pending poll, and after the future moved to another
    /// task. Otherwise it asks the alarm whether it went off, when the
    /// alarm can tell without a poll.
    struct Deadline<F, A> {
        #[pin]
        future: F,
        #[pin]
        alarm: A,
        armed_for: Option<Waker>,
    }
}

impl<F, A> Deadline<F, A> {
    fn new(future: F, alarm: A) -> Self {
        Self {
            future,
            alarm,
            armed_for: None,
        }
    }
}

impl<F: Future, A: Alarm> Future for Deadline<F, A> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Poll::Ready(output) = this.future.poll(context) {
            return Poll::Ready(Ok(output));
        }
        let armed_for_this_task = this
            .armed_for
            .as_ref()
            .is_some_and(|waker| waker.will_wake(context.waker()));
        if armed_for_this_task && let Some(went_off) = this.alarm.as_mut().went_off() {
            return if went_off {
                Poll::Ready(Err(Elapsed))
            } else {
                Poll::Pending
            };
        }
        match arm(this.alarm, context) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => {
                if !armed_for_this_task {
                    *this.armed_for = Some(context.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

/// Polls `alarm`, unconstrained by tokio's cooperative budget: a task
/// whose future used up its budget of the scheduler must still arm its
/// deadline (so does `Timeout`).
fn arm<A: Alarm>(alarm: Pin<&mut A>, context: &mut Context<'_>) -> Poll<()> {
    #[cfg(feature = "tokio")]
    {
        std::pin::pin!(tokio::task::coop::unconstrained(alarm)).poll(context)
    }
    #[cfg(not(feature = "tokio"))]
    {
        alarm.poll(context)
    }
}

/// The timer of builds without `tokio`: `futures-timer`'s thread.
#[cfg(any(not(feature = "tokio"), test))]
mod shared_thread {
    use std::time::Duration;

    use super::LONGEST;

    pub(super) fn delay(delay: Duration) -> futures_timer::Delay {
        futures_timer::Delay::new(delay.min(LONGEST))
    }

    pub(super) async fn sleep(delay: Duration) {
        self::delay(delay).await;
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
                    let deadline = super::Deadline::new(future, super::shared_thread::delay(limit));
                    Box::pin(async move { deadline.await.ok() })
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

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Counting {
        fn wake(self: std::sync::Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl Counting {
        fn wakes(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    /// The deadline wakes whichever task polled the call last: one that
    /// is polled again by the same task does not give the timer its waker
    /// again, one polled by another task does.
    #[tokio::test]
    async fn the_deadline_wakes_the_task_that_polled_last() {
        use std::sync::Arc;
        use std::task::{Context, Poll, Waker};

        for (timer, _, within) in timers() {
            let mut call = within(
                Duration::from_millis(30),
                Box::pin(std::future::pending::<u8>()),
            );
            let (first, second) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
            let first_waker = Waker::from(first.clone());
            let second_waker = Waker::from(second.clone());
            for waker in [&first_waker, &first_waker, &second_waker, &second_waker] {
                let polled = call.as_mut().poll(&mut Context::from_waker(waker));
                assert!(polled.is_pending(), "{timer}");
            }
            let began = Instant::now();
            while second.wakes() == 0 && began.elapsed() < Duration::from_secs(5) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert_eq!((first.wakes(), second.wakes()), (0, 1), "{timer}");
            let polled = call.as_mut().poll(&mut Context::from_waker(&second_waker));
            assert_eq!(polled, Poll::Ready(None), "{timer}");
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
