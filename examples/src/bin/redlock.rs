//! Redlock over 5 independent Redis primaries: a lock needs a majority (3).
//!
//! Run: `cargo run -p redis-script-examples --bin redlock`
//!
//! Without `REDIS_URL` it starts 5 throwaway `redis-server`s, locks with all
//! of them up, stops 2 and locks again, then stops a third and fails to.
//! With `REDIS_URL` set to a comma-separated list of independent servers it
//! only locks and releases once on them.

use std::time::Duration;

use redis_script_examples::workflows::redlock::Redlock;
use redis_script_test::RedisServer;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let resource = "lock:{nightly-report}";
    let ttl = Duration::from_secs(10);

    if let Ok(urls) = std::env::var("REDIS_URL") {
        let mut nodes = Vec::new();
        for url in urls.split(',') {
            let client = redis::Client::open(url.trim())?;
            nodes.push(client.get_multiplexed_async_connection().await?);
        }
        println!("using {} node(s) from REDIS_URL", nodes.len());
        let redlock = Redlock::new(nodes);
        let guard = redlock.lock(resource, ttl).await?;
        println!("lock {resource}: {guard:?}");
        if let Some(guard) = guard {
            println!("released on {} node(s)", redlock.release(&guard).await);
        }
        return Ok(());
    }

    let mut servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let mut nodes = Vec::new();
    for server in &servers {
        nodes.push(server.connection().await);
    }
    let ports: Vec<u16> = servers.iter().map(RedisServer::port).collect();
    println!("REDIS_URL is not set: started 5 throwaway redis-servers on ports {ports:?}");
    let redlock = Redlock::new(nodes).retry_for(Duration::from_millis(300));
    println!("quorum: {} of 5", redlock.quorum());

    let guard = redlock.lock(resource, ttl).await?.ok_or("not acquired")?;
    println!(
        "lock {resource} with 5 nodes up: held on {} nodes, valid for {:?}",
        guard.nodes,
        guard.remaining()
    );
    let rival = redlock.lock(resource, ttl).await?;
    println!(
        "a second client tries for 300 ms: {}",
        if rival.is_some() {
            "acquired?!"
        } else {
            "refused (held)"
        }
    );
    println!(
        "release: deleted on {} nodes",
        redlock.release(&guard).await
    );

    servers[0].stop();
    servers[1].stop();
    println!("stopped 2 nodes (ports {} and {})", ports[0], ports[1]);
    let guard = redlock.lock(resource, ttl).await?.ok_or("not acquired")?;
    println!(
        "lock with 3 of 5 up: held on {} nodes, valid for {:?}",
        guard.nodes,
        guard.remaining()
    );
    println!(
        "release: deleted on {} nodes",
        redlock.release(&guard).await
    );

    servers[2].stop();
    println!("stopped a third node (port {})", ports[2]);
    let guard = redlock.lock(resource, ttl).await?;
    println!(
        "lock with 2 of 5 up: {}",
        if guard.is_some() {
            "acquired?!"
        } else {
            "refused: no majority"
        }
    );
    println!("stopping the remaining servers");
    Ok(())
}
