// A slice parameter named like the generated code's locals still works;
// the script must read KEYS dynamically for it.
use redis_script::redis_script;

#[redis_script(path = "ui/params/slice_without_dynamic_access.lua", keys = 1)]
async fn delete_all(keys: &[&str]) -> i64;

fn main() {}
