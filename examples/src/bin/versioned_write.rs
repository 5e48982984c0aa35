//! Versioned write (optimistic concurrency): a JSON document with a version;
//! a write based on a stale version is refused with a typed conflict.
//!
//! Run: `cargo run -p redis-script-examples --bin versioned_write`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::time::Duration;

use redis_script::Failure;
use redis_script_examples::connect;
use redis_script_examples::workflows::versioned::{
    VersionError, Versioned, get_versioned, set_versioned, update,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cart {
    owner: String,
    items: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let key = format!("cart:{{{}}}", &redis_script_examples::owner_token()[..8]);
    let ttl = Some(Duration::from_secs(600));

    let cart = Cart {
        owner: "ada".into(),
        items: vec![],
    };
    let outcome = set_versioned(connection, &key, &cart, None, ttl).await?;
    println!("create {key}: {outcome:?}");

    let conflict = set_versioned(connection, &key, &cart, None, ttl).await;
    println!("create it again: {:?}", conflict.map_err(|e| e.to_string()));

    let Some(Versioned {
        version,
        doc: mut cart,
    }) = get_versioned::<_, Cart>(connection, &key).await?
    else {
        return Err("the cart vanished".into());
    };
    println!("read: version {version}, {} items", cart.items.len());

    cart.items.push("book".into());
    let outcome = set_versioned(connection, &key, &cart, Some(version), ttl).await?;
    println!("add a book expecting version {version}: {outcome:?}");

    // A second writer that also read version 1 is now stale.
    cart.items.push("pen".into());
    match set_versioned(connection, &key, &cart, Some(version), ttl).await {
        Err(Failure::Declared(VersionError::VersionConflict { expected, found })) => println!(
            "stale write expecting version {expected}: refused, version {found} is stored (re-read and retry)"
        ),
        other => println!("stale write: unexpected {other:?}"),
    }

    // The read-modify-write loop re-reads on conflicts.
    let (outcome, conflicts) = update(connection, &key, ttl, 5, |cart: Option<Cart>| {
        let mut cart = cart.unwrap_or(Cart {
            owner: "ada".into(),
            items: vec![],
        });
        cart.items.push("pen".into());
        cart
    })
    .await?;
    println!("update() adding a pen: {outcome:?} after {conflicts} conflicts");

    let missing = set_versioned(connection, "cart:{nobody}", &cart, Some(3), ttl).await;
    println!(
        "update a cart that does not exist: {:?}",
        missing.map_err(|e| e.to_string())
    );

    let stored: Option<Versioned<Cart>> = get_versioned(connection, &key).await?;
    if let Some(Versioned { version, doc }) = stored {
        println!("final: version {version}, items {:?}", doc.items);
    }
    let () = redis::cmd("DEL").arg(&key).query_async(connection).await?;
    println!("deleted {key}");
    Ok(())
}
