// A write command in a function registered with `flags = {'no-writes'}`.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/write_in_no_writes.lua")]
mod counters {
    #[function(keys = 1)]
    async fn reset(counter: &str) -> i64;
}

fn main() {}
