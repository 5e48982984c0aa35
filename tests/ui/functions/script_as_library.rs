// A script given to `#[redis_library]`: one error naming the form to use.
use redis_script::redis_library;

#[redis_library(path = "ui/ok.lua")]
mod counters {
    #[function(keys = 1)]
    async fn bump(counter: &str) -> i64;
}

fn main() {}
