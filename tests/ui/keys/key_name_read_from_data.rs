use redis_script::redis_script;

// The script uses the members of a set as key names.
#[redis_script(path = "ui/keys/key_name_read_from_data.lua", keys = 1)]
async fn expire_sessions(index: &str) -> i64;

fn main() {}
