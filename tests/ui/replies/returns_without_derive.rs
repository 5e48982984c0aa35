use redis_script::redis_script;

#[derive(Debug)]
struct Decision(u64);

impl redis::FromRedisValue for Decision {
    fn from_redis_value(value: redis::Value) -> Result<Self, redis::ParsingError> {
        let (_, count): (String, u64) = redis::FromRedisValue::from_redis_value(value)?;
        Ok(Decision(count))
    }
}

#[redis_script(path = "ui/replies/wrong_element_count.lua", keys = 1)]
async fn admit(counter: &str, limit: u32) -> Decision;

fn main() {}
