//! Exactly-once transfers: a payment sent twice with the same id moves
//! the money once, and both requests get the same balances.
//!
//! Run: `cargo run -p redis-script-examples --bin transfer`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use redis_script_examples::connect;
use redis_script_examples::workflows::transfer::{TransferError, balance_key, pay, transfer};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let (alice, bob) = (balance_key("demo", "alice"), balance_key("demo", "bob"));
    let () = redis::cmd("MSET")
        .arg(&alice)
        .arg(100)
        .arg(&bob)
        .arg(0)
        .query_async(connection)
        .await?;
    let payment = format!("payment-{}", std::process::id());

    let first = pay(connection, &payment, &alice, &bob, 30).await?;
    println!("pay 30 as {payment}: balances {first:?}");
    let again = pay(connection, &payment, &alice, &bob, 30).await?;
    println!("the same request again: balances {again:?} (nothing moved)");

    // A new call of the generated function is a new payment.
    let other = transfer(connection, &alice, &bob, 30).await?;
    println!("another transfer of 30: balances {other:?}");

    match pay(connection, &format!("{payment}-big"), &alice, &bob, 500).await {
        Err(redis_script::Failure::Declared(TransferError::Insufficient(balance))) => {
            println!("pay 500: refused, the balance is {balance}");
        }
        other => println!("pay 500: unexpected {other:?}"),
    }
    let balances: (i64, i64) = redis::cmd("MGET")
        .arg(&alice)
        .arg(&bob)
        .query_async(connection)
        .await?;
    println!("MGET: {balances:?}");
    Ok(())
}
