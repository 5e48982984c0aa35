//! The client-side cost of one call without the network: building the
//! command, and packing it into the bytes written to the socket.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::variants::{
    AMOUNT, DESTINATION, LOCK_KEY, SOURCE, TOKEN, Workload, release_lock, transfer,
};

/// The system allocator, counting allocations while [`COUNTING`] is on.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn count() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// The one `unsafe` of the benchmark: a global allocator must be an
// `unsafe impl`. Every method forwards to `System` unchanged.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// One row of the encoding table.
#[derive(Debug)]
pub struct EncodeRow {
    pub workload: Workload,
    pub label: &'static str,
    pub build_ns: f64,
    pub build_allocations: f64,
    /// `None` where the API does not expose the packed command.
    pub pack_ns: Option<f64>,
    pub pack_allocations: Option<f64>,
}

/// The timed iterations are split into this many batches; the fastest
/// batch is reported, so a preempted batch does not count.
const BATCHES: usize = 10;

/// Calls `f` `iterations` times; nanoseconds per call (best batch).
/// Allocations per call are counted in a separate, shorter pass so the
/// count does not slow the timed one.
pub fn measure(iterations: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..iterations.min(10_000) {
        f();
    }
    let batch = (iterations / BATCHES).max(1);
    let mut ns = f64::INFINITY;
    for _ in 0..BATCHES {
        let began = Instant::now();
        for _ in 0..batch {
            f();
        }
        ns = ns.min(began.elapsed().as_nanos() as f64 / batch as f64);
    }

    let counted = iterations.clamp(1, 10_000);
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..counted {
        f();
    }
    COUNTING.store(false, Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) as f64 / counted as f64;
    (ns, allocations)
}

/// Runs on one thread with nothing else running (call it after the network
/// measurements, with the runtime shut down) so the allocation counts are
/// the measured code's own.
pub fn encoding(iterations: usize) -> Vec<EncodeRow> {
    let mut rows = Vec::new();
    let mut push =
        |workload: Workload, label: &'static str, build: (f64, f64), pack: Option<(f64, f64)>| {
            rows.push(EncodeRow {
                workload,
                label,
                build_ns: build.0,
                build_allocations: build.1,
                pack_ns: pack.map(|p| p.0),
                pack_allocations: pack.map(|p| p.1),
            });
        };

    let release_sha = crate::variants::Workload::ReleaseLock.file_sha1();
    let release_rs = redis::Script::new(crate::variants::RELEASE_LOCK_FILE);
    push(
        Workload::ReleaseLock,
        "generated `release_lock::call(…)`",
        measure(iterations, || {
            black_box(release_lock::call(black_box(LOCK_KEY), black_box(TOKEN)));
        }),
        Some(measure(iterations, || {
            let call = release_lock::call(black_box(LOCK_KEY), black_box(TOKEN));
            black_box(call.command().get_packed_command());
        })),
    );
    let release_by_hand = || {
        let mut command = redis::cmd("EVALSHA");
        command
            .arg(black_box(release_sha))
            .arg(1)
            .arg(black_box(LOCK_KEY))
            .arg(black_box(TOKEN));
        command
    };
    push(
        Workload::ReleaseLock,
        "hand-written `cmd(\"EVALSHA\")…`",
        measure(iterations, || {
            black_box(release_by_hand());
        }),
        Some(measure(iterations, || {
            black_box(release_by_hand().get_packed_command());
        })),
    );
    push(
        Workload::ReleaseLock,
        "redis-rs `Script::key(…).arg(…)`",
        measure(iterations, || {
            let mut invocation = release_rs.key(black_box(LOCK_KEY));
            invocation.arg(black_box(TOKEN));
            black_box(&invocation);
        }),
        None,
    );

    let transfer_sha = crate::variants::Workload::Transfer.file_sha1();
    let transfer_rs = redis::Script::new(crate::variants::TRANSFER_FILE);
    push(
        Workload::Transfer,
        "generated `transfer::call(…)`",
        measure(iterations, || {
            black_box(transfer::call(
                black_box(SOURCE),
                black_box(DESTINATION),
                black_box(AMOUNT),
            ));
        }),
        Some(measure(iterations, || {
            let call = transfer::call(black_box(SOURCE), black_box(DESTINATION), black_box(AMOUNT));
            black_box(call.command().get_packed_command());
        })),
    );
    let transfer_by_hand = || {
        let mut command = redis::cmd("EVALSHA");
        command
            .arg(black_box(transfer_sha))
            .arg(2)
            .arg(black_box(SOURCE))
            .arg(black_box(DESTINATION))
            .arg(black_box(AMOUNT));
        command
    };
    push(
        Workload::Transfer,
        "hand-written `cmd(\"EVALSHA\")…`",
        measure(iterations, || {
            black_box(transfer_by_hand());
        }),
        Some(measure(iterations, || {
            black_box(transfer_by_hand().get_packed_command());
        })),
    );
    push(
        Workload::Transfer,
        "redis-rs `Script::key(…).key(…).arg(…)`",
        measure(iterations, || {
            let mut invocation = transfer_rs.key(black_box(SOURCE));
            invocation
                .key(black_box(DESTINATION))
                .arg(black_box(AMOUNT));
            black_box(&invocation);
        }),
        None,
    );
    rows
}
