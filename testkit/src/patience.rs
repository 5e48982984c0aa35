//! How long the harness waits, and the one factor that stretches every wait.
//!
//! A test that fails because the machine was busy says nothing about the
//! script. redis-rs gives every async connection a 500 ms response
//! timeout; a CI runner with a dozen jobs on two cores misses it on a plain
//! `SET`. So every connection this crate opens answers to
//! [`response_timeout`] instead, and every wait of the harness (a server's
//! start, a cluster's health, a failover, a lease on a shared database) is a
//! base duration multiplied by [`time_scale`].
//!
//! The factor comes from the environment variable
//! `REDIS_SCRIPT_TEST_TIME_SCALE` (a number ≥ 1, default 1): set it to 3 on
//! a runner known to be slow, and every deadline the harness and the tests
//! that use [`scaled`] give is three times as long. Nothing gets shorter,
//! and a test that asserts a duration keeps its own: this only stretches
//! how long a test waits before it calls a hang a failure.
//!
//! ```
//! use std::time::Duration;
//! use redis_script_test::patience;
//!
//! // A scenario's own limit, stretched like the harness's.
//! let limit = patience::scaled(Duration::from_secs(30));
//! assert!(limit >= Duration::from_secs(30));
//! ```

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable holding the factor (a number ≥ 1).
pub const TIME_SCALE_VARIABLE: &str = "REDIS_SCRIPT_TEST_TIME_SCALE";

/// The response timeout of the connections this crate opens, before
/// scaling: long enough that a loaded machine never reaches it, short
/// enough that a server that stopped answering fails the test within a
/// run's patience.
const BASE_RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection timeout of the connections this crate opens, before
/// scaling.
const BASE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// The factor every harness deadline is multiplied by: the value of
/// `REDIS_SCRIPT_TEST_TIME_SCALE`, or 1.
///
/// # Panics
///
/// If the variable is set to anything but a finite number ≥ 1 (once, on
/// the first call), so a mistyped factor is never silently ignored.
pub fn time_scale() -> f64 {
    static SCALE: OnceLock<f64> = OnceLock::new();
    *SCALE.get_or_init(|| match std::env::var(TIME_SCALE_VARIABLE) {
        Err(std::env::VarError::NotPresent) => 1.0,
        Ok(text) => parse_scale(&text).unwrap_or_else(|problem| panic!("{problem}")),
        Err(std::env::VarError::NotUnicode(_)) => {
            panic!("{TIME_SCALE_VARIABLE} is not valid UTF-8: set it to a number ≥ 1, such as 3")
        }
    })
}

fn parse_scale(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(scale) if scale.is_finite() && scale >= 1.0 => Ok(scale),
        _ => Err(format!(
            "{TIME_SCALE_VARIABLE}={text:?} is not a number ≥ 1: set it to the factor that \
             stretches every wait of the test harness, such as 3 on a slow runner"
        )),
    }
}

/// `base` stretched by [`time_scale`].
pub fn scaled(base: Duration) -> Duration {
    base.mul_f64(time_scale())
}

/// The response timeout of every connection the harness opens: 10 s,
/// scaled.
pub fn response_timeout() -> Duration {
    scaled(BASE_RESPONSE_TIMEOUT)
}

/// The connection timeout of every connection the harness opens: 5 s,
/// scaled.
pub fn connection_timeout() -> Duration {
    scaled(BASE_CONNECTION_TIMEOUT)
}

/// The configuration of the harness's multiplexed connections: the
/// harness's response and connection timeouts in place of redis-rs's
/// defaults. Open your own connections with it when a test needs one the
/// handles do not give.
///
/// ```no_run
/// # async fn example(server: &redis_script_test::RedisServer) -> redis::RedisResult<()> {
/// let connection = server
///     .client()
///     .get_multiplexed_async_connection_with_config(&redis_script_test::patience::connection_config())
///     .await?;
/// # Ok(()) }
/// ```
pub fn connection_config() -> redis::AsyncConnectionConfig {
    redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(response_timeout()))
        .set_connection_timeout(Some(connection_timeout()))
}

/// The same timeouts for a `redis::aio::ConnectionManager`.
pub fn manager_config() -> redis::aio::ConnectionManagerConfig {
    redis::aio::ConnectionManagerConfig::new()
        .set_response_timeout(Some(response_timeout()))
        .set_connection_timeout(Some(connection_timeout()))
}

/// A cluster client builder for `urls` with the same timeouts.
pub fn cluster_builder(urls: Vec<String>) -> redis::cluster::ClusterClientBuilder {
    redis::cluster::ClusterClientBuilder::new(urls)
        .response_timeout(response_timeout())
        .connection_timeout(connection_timeout())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_factor_is_a_finite_number_of_at_least_one() {
        assert_eq!(parse_scale("3"), Ok(3.0));
        assert_eq!(parse_scale(" 1.5 "), Ok(1.5));
        assert_eq!(parse_scale("1"), Ok(1.0));
        for wrong in ["0.5", "0", "-2", "inf", "NaN", "", "three"] {
            let problem = parse_scale(wrong).expect_err(wrong);
            assert!(problem.contains(TIME_SCALE_VARIABLE), "{problem}");
            assert!(problem.contains("such as 3"), "{problem}");
        }
    }
}
