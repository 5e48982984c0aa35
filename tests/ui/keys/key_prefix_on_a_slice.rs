use redis_script::redis_script;

#[redis_script(path = "ui/keys/key_prefix_on_a_slice.lua", keys = 1, dynamic_keys)]
async fn clear(counter: &str, #[key_prefix] prefixes: &[&str]) -> i64;

fn main() {}
