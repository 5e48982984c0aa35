use redis_script::JsonShape;

/// A type of another crate, say, with its own `Serialize`.
struct Timestamp(u64);

#[derive(JsonShape)]
#[serde(rename_all = "camelCase")]
struct Job {
    job_id: String,
    created_at: Timestamp,
    retried_at: Option<Timestamp>,
}

fn main() {}
