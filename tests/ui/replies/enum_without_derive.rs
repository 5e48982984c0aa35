use redis_script::redis_script;

// The derive is missing: the enum neither decodes nor describes its tags,
// and the fix is given once.
#[derive(Debug)]
enum Decision {
    Allowed { count: u64 },
    Denied { count: u64 },
}

#[redis_script(path = "ui/replies/wrong_element_count.lua", keys = 1)]
async fn admit(counter: &str, limit: u32) -> Decision;

fn main() {}
