use redis_script::redis_script;

#[redis_script(path = "ui/params/keys_out_of_range.lua", keys = 1)]
async fn move_item(source: &str, item: &str) -> i64;

fn main() {}
