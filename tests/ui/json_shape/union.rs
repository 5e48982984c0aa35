use redis_script::JsonShape;

#[derive(JsonShape)]
union Number {
    signed: i64,
    unsigned: u64,
}

fn main() {}
