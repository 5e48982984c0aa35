use redis_script::redis_script;

trait Store {
    #[redis_script(path = "ui/ok.lua", keys = 1)]
    async fn set_value(key: &str, value: &str) -> String;
}

fn main() {}
