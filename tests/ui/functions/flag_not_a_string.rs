// Each flag is a string.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/flag_not_a_string.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
