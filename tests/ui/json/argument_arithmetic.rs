use redis_script::{Json, redis_script};

#[derive(serde::Serialize, serde::Deserialize, redis_script::JsonShape)]
#[serde(rename_all = "camelCase")]
struct Job {
    job_id: String,
    attempts: u32,
    done: bool,
    note: Option<String>,
    tags: Vec<String>,
}

#[redis_script(path = "ui/json/argument_arithmetic.lua", keys = 1)]
async fn count_tags(tag_count: &str, job: Json<Job>) -> i64;

fn main() {}
