use redis_script::redis_script;

struct Token(String);

#[redis_script(path = "ui/ok.lua", keys = 1)]
async fn set_value(key: &str, value: Token) -> String;

fn main() {}
