use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1)]
async fn set_value(key: &str, value: &str) -> Result<String, redis_script::Error>;

fn main() {}
