//! Loading scripts ahead of the first call, so even the first call is warm.

use redis::aio::ConnectionLike;
use redis::{Pipeline, Value};

#[cfg(feature = "cluster")]
use crate::cluster::PreloadReport;
use crate::error::{Error, Origin};
use crate::lua_advisories::{self, LuaAdvisory, ServerVersion};
use crate::refusal;
use crate::reply::render_reply;
use crate::script::Script;
use crate::telemetry;

/// Label used in errors that concern the preload as a whole.
const PRELOAD: &str = "preload";

/// What [`preload`] learned of the server after loading the scripts: its
/// release and the known vulnerabilities of its Lua engine.
///
/// The preload reads them with `INFO server` once the scripts are loaded.
/// A user without permission for `INFO` (or a reply that names no release)
/// leaves `server` at `None` and `advisories` empty: the preload itself
/// succeeded, and that is never an error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Preloaded {
    /// The server's release, as `INFO server` names it.
    pub server: Option<ServerVersion>,
    /// The known Lua-engine vulnerabilities of that release, by the table
    /// of [`lua_advisories`](crate::lua_advisories) (the guide's safety
    /// page); empty when the table knows of none. The first preload or
    /// deploy to each server also logs them as a `tracing` warning.
    pub advisories: Vec<LuaAdvisory>,
}

impl From<lua_advisories::Seen> for Preloaded {
    fn from(seen: lua_advisories::Seen) -> Self {
        Preloaded {
            server: seen.server,
            advisories: seen.advisories,
        }
    }
}

/// Loads `scripts` into the server's script cache with `SCRIPT LOAD`, all
/// in one round trip, and checks that the server computed the SHA1 each
/// script was compiled with.
///
/// Not needed for correctness (a call on a cold server costs one extra
/// round trip, never an error), but it takes that round trip out of the
/// first request after start-up. On a cluster use
/// [`cluster::preload`](crate::cluster::preload), which loads on every node.
///
/// Then it reads the server's release with `INFO server` and reports it
/// with the known vulnerabilities of its Lua engine ([`Preloaded`]). An
/// empty list of scripts sends nothing and reports no server.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{preload, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let preloaded = preload(connection, &[&release_lock::SCRIPT]).await?;
/// for advisory in &preloaded.advisories {
///     eprintln!("the server's Lua engine is exposed to {}: {}", advisory.id, advisory.summary);
/// }
/// # Ok(()) }
/// ```
pub async fn preload<C>(connection: &mut C, scripts: &[&'static Script]) -> Result<Preloaded, Error>
where
    C: ConnectionLike + ?Sized,
{
    let span = telemetry::admin_span("SCRIPT LOAD", "scripts", scripts.len());
    telemetry::traced(span, load_scripts(connection, scripts)).await
}

async fn load_scripts<C>(
    connection: &mut C,
    scripts: &[&'static Script],
) -> Result<Preloaded, Error>
where
    C: ConnectionLike + ?Sized,
{
    if scripts.is_empty() {
        return Ok(Preloaded::default());
    }
    let replies: Vec<Value> = connection
        .req_packed_commands(&load_pipeline(scripts), 0, scripts.len())
        .await
        .map_err(preload_error)?;
    check_replies(scripts, &replies, "the server")?;
    // The server's release, for the Lua-engine advisories.
    let info = connection
        .req_packed_command(&lua_advisories::info_command())
        .await;
    Ok(lua_advisories::observe_reply(info).into())
}

/// [`preload`] on a synchronous connection, blocking the thread.
pub fn preload_blocking<C>(
    connection: &mut C,
    scripts: &[&'static Script],
) -> Result<Preloaded, Error>
where
    C: redis::ConnectionLike + ?Sized,
{
    let span = telemetry::admin_span("SCRIPT LOAD", "scripts", scripts.len());
    telemetry::traced_blocking(span, || load_scripts_blocking(connection, scripts))
}

fn load_scripts_blocking<C>(
    connection: &mut C,
    scripts: &[&'static Script],
) -> Result<Preloaded, Error>
where
    C: redis::ConnectionLike + ?Sized,
{
    if scripts.is_empty() {
        return Ok(Preloaded::default());
    }
    let packed = load_pipeline(scripts).get_packed_pipeline();
    let replies = connection
        .req_packed_commands(&packed, 0, scripts.len())
        .map_err(preload_error)?;
    check_replies(scripts, &replies, "the server")?;
    let info = connection.req_command(&lua_advisories::info_command());
    Ok(lua_advisories::observe_reply(info).into())
}

/// Loads `scripts` on every node of a Redis Cluster (primaries and
/// replicas, so read-only scripts routed to replicas are warm too), one
/// round trip per node, and checks every returned SHA1.
///
/// A node that cannot be reached, or that refuses, does not stop the
/// others: the report has the outcome of every script on every node. This
/// fails as a whole only when the cluster's topology cannot be read.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::cluster_async::ClusterConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{cluster, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let report = cluster::preload(connection, &[&release_lock::SCRIPT]).await?;
/// for node in report.failed() {
///     eprintln!("{} stays cold on {} until its first call: {:?}", node.name, node.address, node.outcome);
/// }
/// # Ok(()) }
/// ```
#[cfg(feature = "cluster")]
pub async fn preload_cluster(
    connection: &mut redis::cluster_async::ClusterConnection,
    scripts: &[&'static Script],
) -> Result<PreloadReport, Error> {
    let span = telemetry::admin_span("SCRIPT LOAD", "scripts on every node", scripts.len());
    telemetry::traced(span, load_scripts_on_every_node(connection, scripts)).await
}

#[cfg(feature = "cluster")]
async fn load_scripts_on_every_node(
    connection: &mut redis::cluster_async::ClusterConnection,
    scripts: &[&'static Script],
) -> Result<PreloadReport, Error> {
    use redis::cluster_routing::SingleNodeRoutingInfo;

    use crate::cluster::NodeOutcome;
    use crate::topology::{Nodes, cluster_nodes};

    let nodes = cluster_nodes(connection, PRELOAD, Nodes::All).await?;
    let mut report = PreloadReport {
        outcomes: Vec::with_capacity(nodes.len() * scripts.len()),
        servers: Vec::with_capacity(nodes.len()),
    };
    if scripts.is_empty() {
        return Ok(report);
    }
    // The node's release, for the Lua-engine advisories, in the same round
    // trip: the pipeline ignores errors, so a refused INFO costs nothing.
    let mut pipeline = load_pipeline(scripts);
    pipeline.add_command(lua_advisories::info_command());
    for (host, port) in nodes {
        let address = format!("{host}:{port}");
        let route = SingleNodeRoutingInfo::ByAddress { host, port };
        let replies = connection
            .route_pipeline(pipeline.clone(), 0, scripts.len() + 1, route)
            .await;
        if let Ok(replies) = &replies
            && let Some(info) = replies.get(scripts.len())
        {
            report.saw(&address, lua_advisories::observe_value(info));
        }
        for (index, script) in scripts.iter().enumerate() {
            let outcome = match &replies {
                Ok(replies) => check_reply(script, replies.get(index), &address),
                Err(error) => Err(preload_error(error.clone())),
            };
            report.outcomes.push(NodeOutcome {
                address: address.clone(),
                name: script.name(),
                outcome,
            });
        }
    }
    Ok(report)
}

fn load_pipeline(scripts: &[&'static Script]) -> Pipeline {
    let mut pipeline = Pipeline::with_capacity(scripts.len());
    pipeline.ignore_errors();
    for script in scripts {
        pipeline.cmd("SCRIPT").arg("LOAD").arg(script.source());
    }
    pipeline
}

fn preload_error(source: redis::RedisError) -> Error {
    Error::from_failure(Origin::label(PRELOAD), source)
}

fn check_replies(scripts: &[&'static Script], replies: &[Value], node: &str) -> Result<(), Error> {
    for (index, script) in scripts.iter().enumerate() {
        check_reply(script, replies.get(index), node)?;
    }
    Ok(())
}

/// Checks the reply to one script's `SCRIPT LOAD` (none when the server
/// sent fewer replies than commands).
fn check_reply(script: &'static Script, reply: Option<&Value>, node: &str) -> Result<(), Error> {
    let Some(reply) = reply else {
        return Err(Error::Decode {
            operation: script.name(),
            expected: "one SCRIPT LOAD reply per script",
            reply: "no reply".to_owned(),
            reason: format!("{node} sent fewer replies than scripts"),
        });
    };
    let loaded = match reply {
        Value::BulkString(bytes) => bytes.as_slice(),
        Value::SimpleString(text) => text.as_bytes(),
        Value::ServerError(error) => {
            let (code, detail) = (error.code(), error.details().unwrap_or_default());
            // A `#!lua` line that Redis 6.x cannot compile: the script's
            // calls would end the same way.
            if let Some(feature) = refusal::missing_feature(Some(script), code, detail) {
                return Err(Error::Unsupported {
                    operation: script.name(),
                    feature,
                    refusal: format!("{code} {detail}"),
                });
            }
            return Err(Error::from_server(Origin::label(script.name()), error));
        }
        _ => b"",
    };
    if loaded != script.sha1().as_bytes() {
        return Err(Error::Decode {
            operation: script.name(),
            expected: "the SHA1 computed at compile time",
            reply: render_reply(reply),
            reason: format!("SCRIPT LOAD on {node} returned another SHA1"),
        });
    }
    tracing::debug!(
        script = script.name(),
        sha = script.sha1_prefix(),
        path = "preload",
        node,
        "script loaded"
    );
    Ok(())
}
