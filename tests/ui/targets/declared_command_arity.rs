use redis_script::redis_script;

// ACME.PUT is declared in ui/targets/declared.commands (REDIS_SCRIPT_COMMANDS).
#[redis_script(path = "ui/targets/declared_command_arity.lua", keys = 1)]
async fn put(key: &str) -> i64;

fn main() {}
