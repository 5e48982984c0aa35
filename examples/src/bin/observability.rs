//! Observability: the fixed-window rate limiter under load, then what an
//! operator sees. The metrics (calls by script and status, latency, NOSCRIPT
//! fallbacks, errors by kind, replies by tag) come out as Prometheus text
//! from a recorder installed here; the spans of a few requests are printed
//! as a tree, each script call inside the request span that made it.
//!
//! Run: `cargo run -p redis-script-examples --bin observability`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use redis_script::Error;
use redis_script_examples::connect;
use redis_script_examples::workflows::rate_limit::{Decision, rate_limit_fixed};
use tracing::Instrument as _;
use tracing_subscriber::fmt::format::FmtSpan;

const REQUESTS: usize = 500;
const LIMIT: u64 = 100;
const WINDOW_MS: u64 = 60_000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let counter = format!("quota:{{tenant-{}}}:api", std::process::id());

    // Load: two waves of concurrent requests against one limit, the script
    // cache flushed between them. Every call of the second wave is in
    // flight before the first EVAL caches the script again, so each falls
    // back once: the NOSCRIPT count shows it.
    redis_script::preload(connection, &[&rate_limit_fixed::SCRIPT]).await?;
    let (mut allowed, mut denied) = (0, 0);
    for wave in 0..2 {
        if wave == 1 {
            let () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query_async(connection)
                .await?;
        }
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..REQUESTS / 2 {
            let (mut connection, counter) = (connection.clone(), counter.clone());
            tasks.spawn(async move {
                rate_limit_fixed(&mut connection, &counter, LIMIT, WINDOW_MS).await
            });
        }
        while let Some(outcome) = tasks.join_next().await {
            match outcome? {
                Ok(decision) if decision.is_allowed() => allowed += 1,
                Ok(_) => denied += 1,
                Err(error) => return Err(error.into()),
            }
        }
    }
    println!("{REQUESTS} requests, limit {LIMIT}: {allowed} allowed, {denied} denied\n");
    // A mistake a caller makes: a limit of 0 is refused by the script.
    let invalid = rate_limit_fixed(connection, &counter, 0, WINDOW_MS).await;
    assert!(matches!(invalid, Err(Error::Script { .. })));

    println!("# The metrics, as a Prometheus scrape would read them\n");
    for line in metrics.render().lines() {
        if line.contains("redis_atomic") && !line.starts_with("# ") {
            println!("{line}");
        }
    }

    // A few requests with a subscriber that prints each span as it closes,
    // with the spans it sits in: the request, then the script call.
    println!("\n# The spans of three requests (hash tags shown on request)\n");
    redis_script::telemetry::show_hash_tags(true);
    let subscriber = tracing_subscriber::fmt()
        .with_span_events(FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .with_ansi(false)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    for request in 0..3 {
        let span = tracing::info_span!("handle_request", request);
        let decision = async { rate_limit_fixed(connection, &counter, LIMIT, WINDOW_MS).await }
            .instrument(span)
            .await?;
        if let Decision::Denied { retry_after_ms, .. } = decision {
            tracing::info!(retry_after_ms, "answered 429");
        }
    }
    Ok(())
}
