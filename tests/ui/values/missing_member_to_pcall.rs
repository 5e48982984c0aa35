use redis_script::redis_script;

#[redis_script(path = "ui/values/missing_member_to_pcall.lua", keys = 0)]
async fn name_of(document: &str) -> String;

fn main() {}
