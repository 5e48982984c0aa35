use redis_script::JsonShape;

#[derive(JsonShape)]
#[serde(rename_all = "camelCase")]
struct Job {
    job_id: String,
    #[json_shape(anything)]
    payload: String,
    #[json_shape(anny)]
    note: Option<String>,
}

fn main() {}
