//! The Lua-engine advisories against a live server: `preload` learns the
//! server's release from `INFO server`, and a release the guide's table
//! lists as exposed is named in one `tracing` warning, once per server.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use redis_script::{ServerVersion, lua_advisories, preload_blocking};
use redis_script_test::RedisServer;
use redis_script_tests::release_lock;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

/// The messages of the warnings logged while it is the thread's subscriber.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    fn taken(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: Subscriber> Layer<S> for Warnings {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::WARN {
            let mut message = Message(String::new());
            event.record(&mut message);
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(message.0);
        }
    }
}

#[test]
fn an_exposed_release_is_named_once_per_server() {
    let server = RedisServer::start();
    let info: String = server
        .info("server")
        .iter()
        .map(|(name, value)| format!("{name}:{value}\r\n"))
        .collect();
    let version = ServerVersion::from_info(&info).expect("INFO server names the release");
    let expected: Vec<&str> = lua_advisories(version)
        .iter()
        .map(|advisory| advisory.id)
        .collect();
    if version.release.0 == 7 && version.release.1 == 0 || version.release == (8, 0, 2) {
        // Redis 7.0 has no fixed release; 8.0.2 predates 8.0.4's fixes.
        assert!(
            expected.contains(&"CVE-2025-49844"),
            "{version:?}: {expected:?}"
        );
    }

    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    tracing::subscriber::with_default(subscriber, || {
        let mut connection = server.client().get_connection().expect("a connection");
        for _ in 0..2 {
            preload_blocking(&mut connection, &[&release_lock::SCRIPT]).expect("preload");
        }
    });
    let named: Vec<String> = warnings
        .taken()
        .into_iter()
        .filter(|message| message.contains("Lua-engine vulnerabilities"))
        .collect();
    if expected.is_empty() {
        assert!(named.is_empty(), "{version:?}: {named:?}");
    } else {
        assert_eq!(
            named.len(),
            1,
            "once per server, not per preload: {named:?}"
        );
        for id in &expected {
            assert!(named[0].contains(id), "{id} missing from {}", named[0]);
        }
    }
}
