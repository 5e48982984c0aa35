use redis_script::redis_script;

struct Store;

impl Store {
    #[redis_script(path = "ui/ok.lua", keys = 1)]
    async fn set_value(key: &str, value: &str) -> String;
}

async fn caller(connection: &mut redis::aio::MultiplexedConnection) {
    // Still type-checks: the function stands in, so only the declaration errs.
    let _: Result<String, redis_script::Error> = Store::set_value(connection, "k", "v").await;
}

fn main() {
    let _ = caller;
}
