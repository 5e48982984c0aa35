use redis_script::redis_script;

#[redis_script(path = "ui/globals/table_unpack_is_lua_5_2.lua", keys = 1)]
async fn delete_members(set: &str) -> i64;

fn main() {}
