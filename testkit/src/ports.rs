//! Choosing free loopback ports.
//!
//! A port is found by binding `127.0.0.1:0` and reading the port the kernel
//! picked. The listener must be dropped before `redis-server` can bind the
//! port, so another process can take it in between; callers detect that (the
//! server exits, or someone else answers) and retry with a new port. Inside
//! this process, ports handed out once are never handed out again, so
//! concurrent tests of one binary do not race each other.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::sync::{Mutex, PoisonError};

static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// Returns `n` distinct free ports, none handed out before by this process.
pub(crate) fn reserve(n: usize) -> Vec<u16> {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    // Hold every listener until all ports are chosen, so the kernel cannot
    // give the same port twice within one call.
    let mut listeners = Vec::with_capacity(n);
    let mut ports = Vec::with_capacity(n);
    let mut tries = 0;
    while ports.len() < n {
        tries += 1;
        assert!(
            tries <= 1000,
            "could not find {n} free ports on 127.0.0.1 after 1000 tries"
        );
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .unwrap_or_else(|e| panic!("cannot bind a TCP socket on 127.0.0.1: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("cannot read the address of a bound socket: {e}"))
            .port();
        listeners.push(listener);
        if handed_out.insert(port) {
            ports.push(port);
        }
    }
    ports
}
