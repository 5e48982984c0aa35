use redis_script::redis_script;

#[redis_script(path = "ui/globals/os_time_is_absent.lua", keys = 1)]
async fn touch(last_seen: &str) -> String;

fn main() {}
