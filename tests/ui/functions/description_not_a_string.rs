// A description must be a string.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/description_not_a_string.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
