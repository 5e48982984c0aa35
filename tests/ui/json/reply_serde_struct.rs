use redis_script::redis_script;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    job_id: String,
    attempts: u32,
}

#[redis_script(path = "ui/json/reply_serde_struct.lua", keys = 1)]
async fn load_job(job: &str) -> Job;

fn main() {}
