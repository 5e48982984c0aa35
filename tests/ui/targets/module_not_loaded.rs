use redis_script::redis_script;

#[redis_script(path = "ui/targets/module_not_loaded.lua", keys = 1, target = "redis-7.2")]
async fn store_document(key: &str, json: &str) -> String;

fn main() {}
