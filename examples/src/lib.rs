//! Shared plumbing of the example programs: connect to `REDIS_URL`, or start
//! a throwaway `redis-server` on a free loopback port when it is not set.

use redis_script_test::RedisServer;

pub mod workflows;

/// A Redis connection and, when one was started, the throwaway server
/// behind it (stopped when this is dropped).
pub struct Demo {
    pub connection: redis::aio::MultiplexedConnection,
    _server: Option<RedisServer>,
}

impl std::fmt::Debug for Demo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demo").finish_non_exhaustive()
    }
}

/// Connects to `REDIS_URL` if set, else starts `redis-server` on 127.0.0.1.
pub async fn connect() -> Result<Demo, Box<dyn std::error::Error>> {
    match std::env::var("REDIS_URL") {
        Ok(url) => {
            println!("using Redis at {url} (REDIS_URL)");
            let client = redis::Client::open(url)?;
            let connection = client.get_multiplexed_async_connection().await?;
            Ok(Demo {
                connection,
                _server: None,
            })
        }
        Err(_) => {
            let server = RedisServer::start();
            println!(
                "REDIS_URL is not set: started a throwaway redis-server at {} (stopped on exit)",
                server.addr()
            );
            let connection = server.connection().await;
            Ok(Demo {
                connection,
                _server: Some(server),
            })
        }
    }
}

/// A random token that identifies one owner of a lock.
pub fn owner_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}
