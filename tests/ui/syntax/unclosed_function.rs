use redis_script::redis_script;

#[redis_script(path = "ui/syntax/unclosed_function.lua", keys = 1)]
async fn fields_descending(hash: &str) -> Vec<String>;

fn main() {}
