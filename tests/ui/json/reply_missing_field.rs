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

#[redis_script(path = "ui/json/reply_missing_field.lua", keys = 1)]
async fn next_attempt(attempts: &str) -> Option<Json<Job>>;

fn main() {}
