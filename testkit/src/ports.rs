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
        let (listener, port) = bind_free_port();
        listeners.push(listener);
        if handed_out.insert(port) {
            ports.push(port);
        }
    }
    ports
}

/// Returns a free port `p` whose partner `p + offset` is free too, neither
/// handed out before by this process: for a cluster node of a server that
/// cannot be told its bus port (Redis before 7.0 listens for the cluster
/// bus on its port plus 10000).
pub(crate) fn reserve_with_partner(offset: u16) -> (u16, u16) {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    for _ in 0..1000 {
        // Held while the partner is tried, so the kernel cannot hand the
        // port to the partner's bind.
        let (_held, port) = bind_free_port();
        let Some(partner) = port.checked_add(offset) else {
            continue;
        };
        if handed_out.contains(&port) || handed_out.contains(&partner) {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", partner)).is_ok() {
            handed_out.insert(port);
            handed_out.insert(partner);
            return (port, partner);
        }
    }
    panic!("could not find a free port p on 127.0.0.1 with p + {offset} free after 1000 tries")
}

/// A listener on a port of 127.0.0.1 the kernel picked, and that port.
fn bind_free_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .unwrap_or_else(|e| panic!("cannot bind a TCP socket on 127.0.0.1: {e}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("cannot read the address of a bound socket: {e}"))
        .port();
    (listener, port)
}
