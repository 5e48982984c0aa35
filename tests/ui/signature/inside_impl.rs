use redis_script::redis_script;

struct Store;

impl Store {
    #[redis_script(path = "ui/ok.lua", keys = 1)]
    async fn set_value(&self, key: &str, value: &str) -> String;
}

fn main() {}
