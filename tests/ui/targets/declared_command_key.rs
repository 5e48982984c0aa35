use redis_script::redis_script;

// ACME.MGET is declared in ui/targets/declared.commands (REDIS_SCRIPT_COMMANDS).
#[redis_script(path = "ui/targets/declared_command_key.lua", keys = 1)]
async fn read_both(first: &str, second_id: &str) -> Vec<Option<String>>;

fn main() {}
