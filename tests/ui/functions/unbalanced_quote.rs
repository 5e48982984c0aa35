// FUNCTION LOAD splits the first line like a command line: a quote must close.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/unbalanced_quote.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
