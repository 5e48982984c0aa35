//! A connection wrapper that counts round trips, for proving how many a
//! call takes (cold paths, retries) from the client's side.

use redis::aio::ConnectionLike;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// Counts what a client hands to its connection: one round trip per
/// `req_packed_command` and per pipeline (`req_packed_commands`).
#[derive(Debug)]
pub struct CountingConnection<C> {
    inner: C,
    round_trips: usize,
}

impl<C> CountingConnection<C> {
    /// Wraps `inner` with a count of zero.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            round_trips: 0,
        }
    }

    /// The round trips sent through this wrapper so far.
    pub fn round_trips(&self) -> usize {
        self.round_trips
    }
}

impl<C: ConnectionLike + Send> ConnectionLike for CountingConnection<C> {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        self.round_trips += 1;
        self.inner.req_packed_command(cmd)
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        self.round_trips += 1;
        self.inner.req_packed_commands(pipeline, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}
