//! What each Rust argument type sends the script, with the live server as
//! the oracle: for generated values of every type the checker models, the
//! text the script receives through the generated call is one the
//! checker's `SentAs` admits, so `constant_equality` never calls a
//! comparison impossible that a real call can make hold.

use rand::{Rng, SeedableRng};
use redis_script_analysis::SentAs;
use redis_script_test::RedisServer;

#[redis_script::redis_script(path = "lua/arguments/echo.lua", keys = 0)]
async fn echo_bool(value: bool) -> String;

#[redis_script::redis_script(path = "lua/arguments/echo.lua", keys = 0)]
async fn echo_i64(value: i64) -> String;

#[redis_script::redis_script(path = "lua/arguments/echo.lua", keys = 0)]
async fn echo_u64(value: u64) -> String;

#[redis_script::redis_script(path = "lua/arguments/echo.lua", keys = 0)]
async fn echo_f64(value: f64) -> String;

#[redis_script::redis_script(path = "lua/arguments/echo.lua", keys = 0)]
async fn echo_f32(value: f32) -> String;

#[tokio::test]
async fn every_value_arrives_as_a_text_the_checker_admits_for_its_type() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let mut random = rand::rngs::StdRng::seed_from_u64(58);
    let admitted = |rust: &str, text: &str| {
        assert!(
            SentAs::of_rust_type(rust).admits(text),
            "a `{rust}` arrived as {text:?}, which the checker says it never sends"
        );
    };

    for value in [true, false] {
        let text = echo_bool(&mut connection, value).await.expect("bool");
        assert_eq!(text, if value { "1" } else { "0" });
        admitted("bool", &text);
    }
    // What a `bool` never sends, the words scripts mistake it for.
    for word in ["true", "false", "TRUE", ""] {
        assert!(!SentAs::Bool.admits(word), "{word}");
    }

    let mut signed = vec![0, 1, -1, i64::MIN, i64::MAX];
    signed.extend((0..200).map(|_| random.random::<i64>() >> random.random_range(0..63)));
    for value in signed {
        let text = echo_i64(&mut connection, value).await.expect("i64");
        assert_eq!(text.parse::<i64>().ok(), Some(value), "{text}");
        admitted("i64", &text);
    }

    let mut unsigned = vec![0, 1, u64::MAX];
    unsigned.extend((0..200).map(|_| random.random::<u64>() >> random.random_range(0..64)));
    for value in unsigned {
        let text = echo_u64(&mut connection, value).await.expect("u64");
        admitted("u64", &text);
    }

    let mut floats = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1e21,
        1e-7,
        123_456_789.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    floats.extend((0..200).map(|_| {
        let magnitude = 10f64.powi(random.random_range(-12..25));
        let number = random.random_range(-magnitude..magnitude);
        if random.random_bool(0.3) {
            number.trunc()
        } else {
            number
        }
    }));
    for value in floats {
        let text = echo_f64(&mut connection, value).await.expect("f64");
        admitted("f64", &text);
        // The digits alone are never sent, so `ARGV[1] == '1'` never holds.
        assert!(text.parse::<i64>().is_err(), "an f64 arrived as {text:?}");
        let text = echo_f32(&mut connection, value as f32).await.expect("f32");
        admitted("f32", &text);
    }
}
