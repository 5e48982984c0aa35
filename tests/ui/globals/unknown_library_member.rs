use redis_script::redis_script;

#[redis_script(path = "ui/globals/unknown_library_member.lua", keys = 1)]
async fn shout(name: &str) -> String;

fn main() {}
