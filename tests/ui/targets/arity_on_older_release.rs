use redis_script::redis_script;

#[redis_script(path = "ui/targets/arity_on_older_release.lua", keys = 1, target = "redis-7.0")]
async fn rank(board: &str, player: &str) -> Option<Vec<String>>;

fn main() {}
