// There is no negative database.
use redis_script::redis_script;

#[redis_script(path = "ui/server/select_negative.lua", keys = 0)]
async fn run() -> redis_script::redis::Value;

fn main() {}
