// FUNCTION LOAD refuses a first line that names the library twice.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/named_twice.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
