use redis_script::redis_script;

#[redis_script(keys = 1)]
async fn set_value(key: &str, value: &str) -> String;

fn main() {}
