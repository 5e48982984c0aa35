//! A suite of 100 small tests, each with its database, a fixture, a script
//! call and a state assertion: what the crate docs' timings measure
//! (`cargo test -p redis-script-test --test suite_of_100`; with
//! `SUITE_OWN_SERVERS=1`, each test starts a server of its own instead).

use redis_script::redis_script;
use redis_script_test::{State, TestDb};

#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
async fn counter_increment(counter: &str, by: i64) -> i64;

fn database() -> TestDb {
    if std::env::var_os("SUITE_OWN_SERVERS").is_some() {
        TestDb::own_server()
    } else {
        TestDb::new()
    }
}

async fn one_test(number: i64) {
    let db = database();
    db.given(&State::new().string("counter:{c}", number.to_string()))
        .await;
    let mut connection = db.connection().await;
    let value = counter_increment(&mut connection, "counter:{c}", 1)
        .await
        .expect("counter_increment");
    assert_eq!(value, number + 1);
    db.assert_state(&State::new().string("counter:{c}", (number + 1).to_string()))
        .await;
}

macro_rules! suite {
    ($($name:ident = $number:literal),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                one_test($number).await;
            }
        )*
    };
}

suite!(
    t000 = 0,
    t001 = 1,
    t002 = 2,
    t003 = 3,
    t004 = 4,
    t005 = 5,
    t006 = 6,
    t007 = 7,
    t008 = 8,
    t009 = 9,
    t010 = 10,
    t011 = 11,
    t012 = 12,
    t013 = 13,
    t014 = 14,
    t015 = 15,
    t016 = 16,
    t017 = 17,
    t018 = 18,
    t019 = 19,
    t020 = 20,
    t021 = 21,
    t022 = 22,
    t023 = 23,
    t024 = 24,
    t025 = 25,
    t026 = 26,
    t027 = 27,
    t028 = 28,
    t029 = 29,
    t030 = 30,
    t031 = 31,
    t032 = 32,
    t033 = 33,
    t034 = 34,
    t035 = 35,
    t036 = 36,
    t037 = 37,
    t038 = 38,
    t039 = 39,
    t040 = 40,
    t041 = 41,
    t042 = 42,
    t043 = 43,
    t044 = 44,
    t045 = 45,
    t046 = 46,
    t047 = 47,
    t048 = 48,
    t049 = 49,
    t050 = 50,
    t051 = 51,
    t052 = 52,
    t053 = 53,
    t054 = 54,
    t055 = 55,
    t056 = 56,
    t057 = 57,
    t058 = 58,
    t059 = 59,
    t060 = 60,
    t061 = 61,
    t062 = 62,
    t063 = 63,
    t064 = 64,
    t065 = 65,
    t066 = 66,
    t067 = 67,
    t068 = 68,
    t069 = 69,
    t070 = 70,
    t071 = 71,
    t072 = 72,
    t073 = 73,
    t074 = 74,
    t075 = 75,
    t076 = 76,
    t077 = 77,
    t078 = 78,
    t079 = 79,
    t080 = 80,
    t081 = 81,
    t082 = 82,
    t083 = 83,
    t084 = 84,
    t085 = 85,
    t086 = 86,
    t087 = 87,
    t088 = 88,
    t089 = 89,
    t090 = 90,
    t091 = 91,
    t092 = 92,
    t093 = 93,
    t094 = 94,
    t095 = 95,
    t096 = 96,
    t097 = 97,
    t098 = 98,
    t099 = 99,
);
