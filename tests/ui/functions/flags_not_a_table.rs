// Flags come in a table.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/flags_not_a_table.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
