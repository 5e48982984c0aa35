use redis_script::redis_script;

// The file is `ui/file/misspelled_file_target.lua`.
#[redis_script(path = "ui/file/misspelled-file-target.lua", keys = 1)]
async fn read_value(key: &str) -> Option<String>;

fn main() {}
