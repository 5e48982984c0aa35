use redis_script::redis_script;

// `SET` replies the status `OK`, which no integer decodes.
#[redis_script(path = "ui/replies/status_reply_number.lua", keys = 1)]
async fn reset_counter(counter: &str, value: i64) -> i64;

fn main() {}
