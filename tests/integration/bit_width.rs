//! The `bit_width` finding's claim, with the live server as the oracle:
//! for generated constants, the checker flags exactly those the server's
//! `bit` library does not take as written, and the value its message says
//! the library computes with is the one the server computes with.

use rand::{Rng, SeedableRng};
use redis::Value;
use redis_script_analysis::{Code, Signature, analyze};
use redis_script_test::RedisServer;

const TWO_32: f64 = 4_294_967_296.0;

/// The checker's word on `source`: the texts of its `bit_width` findings.
fn findings(source: &str) -> Vec<String> {
    analyze(source, &Signature::default())
        .diagnostics
        .into_iter()
        .filter(|diagnostic| diagnostic.code == Code::BitWidth)
        .map(|diagnostic| diagnostic.text())
        .collect()
}

/// The integer after `marker` in `text`: "takes it as -1".
fn number_after(text: &str, marker: &str) -> Option<i64> {
    let rest = text.split(marker).nth(1)?;
    let digits: String = rest
        .chars()
        .take_while(|c| *c == '-' || c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// A Lua literal that reads back as `number`.
fn literal(number: f64) -> String {
    format!("{number:?}")
}

/// What the server answers `return bit.<function>(<arguments>)`.
fn eval(connection: &mut redis::Connection, source: &str) -> i64 {
    match redis::cmd("EVAL")
        .arg(source)
        .arg(0)
        .query::<Value>(connection)
    {
        Ok(Value::Int(number)) => number,
        other => panic!("{source}: {other:?}"),
    }
}

/// Constants around the edges of what BitOp takes, and random ones from a
/// fixed seed.
fn constants() -> Vec<f64> {
    let mut constants = vec![
        0.0,
        1.0,
        -1.0,
        2.5,
        3.5,
        -2.5,
        0.5,
        2_147_483_647.0,
        2_147_483_648.0,
        -2_147_483_648.0,
        -2_147_483_649.0,
        4_294_967_295.0,
        TWO_32,
        TWO_32 + 1.0,
        TWO_32 + 5.5,
        1e10,
        -1e10,
        1_099_511_627_776.0,
        2_251_799_813_685_247.0,
    ];
    let mut random = rand::rngs::StdRng::seed_from_u64(116);
    for _ in 0..60 {
        let magnitude = 2f64.powi(random.random_range(0..52));
        let mut number = random.random_range(-magnitude..magnitude);
        if random.random_bool(0.7) {
            number = number.trunc();
        }
        constants.push(number);
    }
    constants
}

#[test]
fn the_checker_flags_exactly_the_constants_the_server_does_not_take_as_written() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    for number in constants() {
        let source = format!("return bit.tobit({})", literal(number));
        let computed = eval(&mut connection, &source);
        // As written: the same integer, signed, or unsigned for the
        // patterns with the high bit set (`0xFFFFFFFF` is -1).
        let as_written = number.fract() == 0.0
            && (computed as f64 == number || (computed < 0 && computed as f64 + TWO_32 == number));
        let found = findings(&source);
        assert_eq!(
            found.is_empty(),
            as_written,
            "{source} gives {computed}: {found:?}"
        );
        if let Some(text) = found.first()
            && !text.contains("unrelated number")
        {
            let said =
                number_after(text, "takes it as ").or_else(|| number_after(text, "rounds it to "));
            assert_eq!(said, Some(computed), "{source}: {text}");
        }
    }
}

#[test]
fn the_checker_flags_exactly_the_shift_counts_the_server_does_not_take_as_written() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    let counts = (-40..72).map(f64::from).chain([0.5, 2.5, 31.5, -0.5]);
    for count in counts {
        let source = format!("return bit.lshift(1, {})", literal(count));
        let computed = eval(&mut connection, &source);
        let as_written = (0.0..32.0).contains(&count)
            && count.fract() == 0.0
            && computed == i64::from(1i32.wrapping_shl(count as u32));
        let found = findings(&source);
        assert_eq!(
            found.is_empty(),
            as_written,
            "{source} gives {computed}: {found:?}"
        );
        if let Some(text) = found.first() {
            let said = number_after(text, "shifts by its low 5 bits, ").expect("the count used");
            assert_eq!(
                i64::from(1i32.wrapping_shl(said as u32)),
                computed,
                "{source}: {text}"
            );
        }
    }
}
