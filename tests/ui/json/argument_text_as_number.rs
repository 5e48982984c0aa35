use redis_script::{Json, redis_script};

#[derive(serde::Serialize, redis_script::JsonShape)]
struct Job {
    score: u32,
}

#[redis_script(path = "ui/json/argument_text_as_number.lua", keys = 1)]
async fn add_score(score: &str, job: Json<Job>) -> i64;

fn main() {}
