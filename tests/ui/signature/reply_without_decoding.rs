use redis_script::redis_script;

struct Counter {
    value: i64,
}

#[redis_script(path = "ui/ok.lua", keys = 1)]
async fn set_value(key: &str, value: &str) -> Counter;

fn main() {}
