// The library's top level runs while FUNCTION LOAD loads it: no commands, no
// standard library there.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/command_at_load_time.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
