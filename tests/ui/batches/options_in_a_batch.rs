use redis_script::{Batch, RetryRefusals, redis_script};

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

fn main() {
    let mut batch = Batch::pipeline();
    let _released = batch.add(release_lock::call("lock:{a}", "token").retry_refusals(RetryRefusals::new(3)));
}
