//! Installing a library on a server, or on every primary of a cluster:
//! loaded where missing, left alone where identical, never replaced unless
//! asked.

use redis::aio::ConnectionLike;
use redis::{Cmd, Value};

use crate::call::function_load;
#[cfg(feature = "cluster")]
use crate::cluster::DeployReport;
use crate::error::{Error, Origin};
use crate::library::{Library, load_error};
use crate::lua_advisories::{self, LuaAdvisory, ServerVersion};
use crate::refusal::{LoadRefusal, load_refusal};
use crate::reply::render_reply;
use crate::telemetry;

/// What a deploy does when a server holds another version of the library
/// (a library of the same name whose code differs from this build's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnConflict {
    /// Leave the other version in place and fail with
    /// [`Error::LibraryConflict`], which names both versions' SHA1.
    Refuse,
    /// Replace the other version with this build's code (`FUNCTION LOAD
    /// REPLACE`): [`Deployed::Replaced`].
    Replace,
}

/// What a deploy did on one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deployed {
    /// The library was missing; it is loaded now.
    Loaded,
    /// The server already held this build's code: nothing was written.
    Unchanged,
    /// The server held another version, replaced as
    /// [`OnConflict::Replace`] asked.
    Replaced {
        /// Lowercase hex SHA1 of the code that was replaced.
        previous_sha1: String,
    },
}

/// What [`Library::deploy`] did on one server, and what it learned of the
/// server afterwards: its release and the known vulnerabilities of its Lua
/// engine.
///
/// The deploy reads them with `INFO server` once it is done. A user
/// without permission for `INFO` (or a reply that names no release) leaves
/// `server` at `None` and `advisories` empty: the deploy itself succeeded,
/// and that is never an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Deployment {
    /// Loaded, unchanged or replaced.
    pub deployed: Deployed,
    /// The server's release, as `INFO server` names it.
    pub server: Option<ServerVersion>,
    /// The known Lua-engine vulnerabilities of that release, by the table
    /// of [`lua_advisories`](crate::lua_advisories) (the guide's safety
    /// page); empty when the table knows of none. The first preload or
    /// deploy to each server also logs them as a `tracing` warning.
    pub advisories: Vec<LuaAdvisory>,
}

impl Deployment {
    fn new(deployed: Deployed, seen: lua_advisories::Seen) -> Self {
        Deployment {
            deployed,
            server: seen.server,
            advisories: seen.advisories,
        }
    }
}

impl Library {
    /// Installs the library on the server behind `connection`, comparing
    /// the code it holds (`FUNCTION LIST LIBRARYNAME … WITHCODE`) with this
    /// build's:
    ///
    /// - absent: `FUNCTION LOAD`, [`Deployed::Loaded`];
    /// - identical: nothing written, [`Deployed::Unchanged`];
    /// - another version: with [`OnConflict::Refuse`], left in place and
    ///   [`Error::LibraryConflict`] with both SHA1s; with
    ///   [`OnConflict::Replace`], `FUNCTION LOAD REPLACE` and
    ///   [`Deployed::Replaced`].
    ///
    /// The [`Deployment`] says which, with the server's release and the
    /// known vulnerabilities of its Lua engine, read with `INFO server`
    /// after the deploy.
    ///
    /// One round trip when the library is there, two otherwise. A library
    /// that another library's function names keep out fails with
    /// [`Error::FunctionNameTaken`]; code the server rejects with
    /// [`Error::LoadFailed`].
    ///
    /// Calls load a missing library by themselves; deploy to install it
    /// ahead of the first call, to find out about other versions before
    /// calls fail on them, and to roll a new version out. On a cluster, use
    /// `cluster::deploy`, which deploys on every primary (replicas receive
    /// libraries from their primary).
    ///
    /// ```no_run
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
    /// use redis_script::{Error, OnConflict};
    ///
    /// match quota_lib::LIBRARY.deploy(connection, OnConflict::Refuse).await {
    ///     Ok(deployment) => println!("quota_lib: {:?}", deployment.deployed),
    ///     Err(Error::LibraryConflict { deployed_sha1, .. }) => {
    ///         eprintln!("another quota_lib ({deployed_sha1:?}) is loaded; not replacing it");
    ///     }
    ///     Err(error) => return Err(error),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn deploy<C>(
        &self,
        connection: &mut C,
        on_conflict: OnConflict,
    ) -> Result<Deployment, Error>
    where
        C: ConnectionLike + ?Sized,
    {
        let span = telemetry::admin_span("FUNCTION LOAD", self.name(), 1);
        let deploys = async move {
            let mut deployment = DeploySteps::new(self, on_conflict, None);
            let mut step = deployment.start();
            loop {
                step = match step {
                    Step::Send(command) => {
                        let reply = connection.req_packed_command(&command).await;
                        deployment.received(reply)
                    }
                    Step::Done(result) => {
                        // The server's release, for the Lua-engine
                        // advisories; without INFO permission, no warning.
                        let info = connection
                            .req_packed_command(&lua_advisories::info_command())
                            .await;
                        let seen = lua_advisories::observe_reply(info);
                        return result.map(|deployed| Deployment::new(deployed, seen));
                    }
                };
            }
        };
        telemetry::traced(span, deploys).await
    }

    /// [`Library::deploy`] on a synchronous connection, blocking the thread.
    ///
    /// ```no_run
    /// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
    /// # mod quota_lib {
    /// #     #[function(keys = 1)]
    /// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
    /// #     #[function(keys = 1)]
    /// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
    /// # }
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use redis_script::OnConflict;
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// let mut connection = client.get_connection()?;
    /// let deployment = quota_lib::LIBRARY.deploy_blocking(&mut connection, OnConflict::Replace)?;
    /// println!("quota_lib: {:?} on {:?}", deployment.deployed, deployment.server);
    /// # Ok(()) }
    /// ```
    pub fn deploy_blocking<C>(
        &self,
        connection: &mut C,
        on_conflict: OnConflict,
    ) -> Result<Deployment, Error>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        let span = telemetry::admin_span("FUNCTION LOAD", self.name(), 1);
        telemetry::traced_blocking(span, || {
            let mut deployment = DeploySteps::new(self, on_conflict, None);
            let mut step = deployment.start();
            loop {
                step = match step {
                    Step::Send(command) => {
                        let reply = connection.req_command(&command);
                        deployment.received(reply)
                    }
                    Step::Done(result) => {
                        let info = connection.req_command(&lua_advisories::info_command());
                        let seen = lua_advisories::observe_reply(info);
                        return result.map(|deployed| Deployment::new(deployed, seen));
                    }
                };
            }
        })
    }
}

/// Deploys `libraries` on every primary of a Redis Cluster, as
/// [`Library::deploy`] does on one server; replicas receive them from
/// their primaries. Each library takes one round trip per primary when it
/// is there, two otherwise.
///
/// A node that cannot be reached, refuses, or holds another version does
/// not stop the others: the report has one entry per primary and library.
/// This fails as a whole only when the cluster's topology cannot be read.
///
/// ```no_run
/// # #[redis_script::redis_library(path = "../lua/quota_lib.lua")]
/// # mod quota_lib {
/// #     #[function(keys = 1)]
/// #     pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;
/// #     #[function(keys = 1)]
/// #     pub async fn quota_peek(counter: &str) -> Option<u64>;
/// # }
/// # async fn demo(connection: &mut redis::cluster_async::ClusterConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{OnConflict, cluster};
///
/// let report = cluster::deploy(connection, &[&quota_lib::LIBRARY], OnConflict::Refuse).await?;
/// for failed in report.failed() {
///     eprintln!("{} on {}: {:?}", failed.name, failed.address, failed.outcome);
/// }
/// # Ok(()) }
/// ```
#[cfg(feature = "cluster")]
pub async fn deploy_cluster(
    connection: &mut redis::cluster_async::ClusterConnection,
    libraries: &[&Library],
    on_conflict: OnConflict,
) -> Result<DeployReport, Error> {
    let span = telemetry::admin_span(
        "FUNCTION LOAD",
        "libraries on every primary",
        libraries.len(),
    );
    telemetry::traced(
        span,
        deploy_on_every_primary(connection, libraries, on_conflict),
    )
    .await
}

#[cfg(feature = "cluster")]
async fn deploy_on_every_primary(
    connection: &mut redis::cluster_async::ClusterConnection,
    libraries: &[&Library],
    on_conflict: OnConflict,
) -> Result<DeployReport, Error> {
    use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};

    use crate::cluster::NodeOutcome;
    use crate::topology::{Nodes, cluster_nodes};

    let primaries = cluster_nodes(connection, DEPLOY, Nodes::Primaries).await?;
    let mut report = DeployReport {
        outcomes: Vec::with_capacity(primaries.len() * libraries.len()),
        servers: Vec::with_capacity(primaries.len()),
    };
    for (host, port) in primaries {
        let address = format!("{host}:{port}");
        let node = || {
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: host.clone(),
                port,
            })
        };
        for library in libraries {
            let mut deployment = DeploySteps::new(library, on_conflict, Some(&address));
            let mut step = deployment.start();
            let outcome = loop {
                step = match step {
                    Step::Send(command) => {
                        let reply = connection.route_command(command, node()).await;
                        deployment.received(reply)
                    }
                    Step::Done(outcome) => break outcome,
                };
            };
            report.outcomes.push(NodeOutcome {
                address: address.clone(),
                name: library.name(),
                outcome,
            });
        }
        // The primary's release, for the Lua-engine advisories; without
        // INFO permission, or unreachable, it has no entry.
        if !libraries.is_empty() {
            let info = connection
                .route_command(lua_advisories::info_command(), node())
                .await;
            report.saw(&address, lua_advisories::observe_reply(info));
        }
    }
    Ok(report)
}

/// Label of errors that concern a cluster deploy as a whole.
#[cfg(feature = "cluster")]
const DEPLOY: &str = "deploy";

/// The steps of one deploy of one library on one server, apart from their
/// I/O: list, then load (or replace) when needed.
struct DeploySteps<'d> {
    library: &'d Library,
    on_conflict: OnConflict,
    /// `host:port`, when deploying on one node of a cluster.
    node: Option<&'d str>,
    stage: DeployStage,
    /// `FUNCTION LIST` was sent again after a load found the library
    /// there: someone loaded it between the two commands.
    listed_again: bool,
}

enum DeployStage {
    Listing,
    Loading,
    Replacing { previous_sha1: String },
}

/// What the driver of a deploy does next.
enum Step {
    Send(Cmd),
    Done(Result<Deployed, Error>),
}

impl<'d> DeploySteps<'d> {
    fn new(library: &'d Library, on_conflict: OnConflict, node: Option<&'d str>) -> Self {
        Self {
            library,
            on_conflict,
            node,
            stage: DeployStage::Listing,
            listed_again: false,
        }
    }

    fn start(&mut self) -> Step {
        self.stage = DeployStage::Listing;
        Step::Send(list_command(self.library.name()))
    }

    fn received(&mut self, reply: redis::RedisResult<Value>) -> Step {
        let origin = Origin::label(self.library.name());
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => match redis::ServerError::try_from(error) {
                Ok(error) => Value::ServerError(error),
                Err(error) => return self.done(Err(Error::from_failure(origin, error))),
            },
        };
        match std::mem::replace(&mut self.stage, DeployStage::Listing) {
            DeployStage::Listing => self.listed(&reply),
            DeployStage::Loading => match &reply {
                Value::ServerError(error) => {
                    let (code, detail) = (error.code(), error.details().unwrap_or_default());
                    if load_refusal(code, detail) == LoadRefusal::LibraryExists
                        && !self.listed_again
                    {
                        self.listed_again = true;
                        return self.start();
                    }
                    self.done(Err(self.load_error(code, detail)))
                }
                _ => self.done(Ok(Deployed::Loaded)),
            },
            DeployStage::Replacing { previous_sha1 } => match &reply {
                Value::ServerError(error) => {
                    let error = self.load_error(error.code(), error.details().unwrap_or_default());
                    self.done(Err(error))
                }
                _ => self.done(Ok(Deployed::Replaced { previous_sha1 })),
            },
        }
    }

    /// The reply to `FUNCTION LIST LIBRARYNAME … WITHCODE`.
    fn listed(&mut self, reply: &Value) -> Step {
        let name = self.library.name();
        if let Value::ServerError(error) = reply {
            return self.done(Err(Error::from_server(Origin::label(name), error)));
        }
        let deployed = match listed_code(reply, name) {
            Ok(deployed) => deployed,
            Err(reason) => {
                return self.done(Err(Error::Decode {
                    operation: name,
                    expected: "the reply of FUNCTION LIST WITHCODE",
                    reply: render_reply(reply),
                    reason,
                }));
            }
        };
        let Some(deployed) = deployed else {
            self.stage = DeployStage::Loading;
            return Step::Send(function_load(self.library));
        };
        if deployed == self.library.source().as_bytes() {
            return self.done(Ok(Deployed::Unchanged));
        }
        let deployed_sha1 = sha1_smol::Sha1::from(deployed).digest().to_string();
        match self.on_conflict {
            OnConflict::Refuse => self.done(Err(Error::LibraryConflict {
                operation: name,
                library: name,
                node: self.node.map(str::to_owned),
                deployed_sha1: Some(deployed_sha1),
                compiled_sha1: self.library.sha1(),
            })),
            OnConflict::Replace => {
                self.stage = DeployStage::Replacing {
                    previous_sha1: deployed_sha1,
                };
                let mut command = Cmd::with_capacity(4, self.library.source().len() + 24);
                command
                    .arg("FUNCTION")
                    .arg("LOAD")
                    .arg("REPLACE")
                    .arg(self.library.source());
                Step::Send(command)
            }
        }
    }

    fn load_error(&self, code: &str, detail: &str) -> Error {
        let mut error = load_error(self.library.name(), self.library, code, detail);
        if let Error::LibraryConflict { node, .. } = &mut error {
            *node = self.node.map(str::to_owned);
        }
        error
    }

    fn done(&self, result: Result<Deployed, Error>) -> Step {
        match &result {
            Ok(deployed) => tracing::debug!(
                library = self.library.name(),
                sha = self.library.sha1_prefix(),
                node = self.node.unwrap_or_default(),
                ?deployed,
                "library deployed"
            ),
            Err(error) => tracing::debug!(
                library = self.library.name(),
                sha = self.library.sha1_prefix(),
                node = self.node.unwrap_or_default(),
                %error,
                "library not deployed"
            ),
        }
        Step::Done(result)
    }
}

/// `FUNCTION LIST LIBRARYNAME <name> WITHCODE`. The name is a glob pattern
/// matched without regard to case (`quota_lib` also lists `Quota_Lib`), so
/// the reply is filtered for the exact name ([`listed_code`]) and glob
/// characters are escaped (library names cannot hold them today).
fn list_command(name: &str) -> Cmd {
    let mut pattern = String::with_capacity(name.len() + 2);
    for character in name.chars() {
        if matches!(character, '*' | '?' | '[' | ']' | '\\') {
            pattern.push('\\');
        }
        pattern.push(character);
    }
    let mut command = Cmd::with_capacity(5, pattern.len() + 40);
    command
        .arg("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(pattern)
        .arg("WITHCODE");
    command
}

/// The code of the library named exactly `name` in a `FUNCTION LIST …
/// WITHCODE` reply (RESP2: an array of flat key-value arrays; RESP3: an
/// array of maps); `None` when it is not listed.
fn listed_code<'v>(reply: &'v Value, name: &str) -> Result<Option<&'v [u8]>, String> {
    let Value::Array(libraries) = reply else {
        return Err("expected an array of libraries".to_owned());
    };
    for library in libraries {
        let field = |wanted: &str| -> Option<&'v [u8]> {
            let value = match library {
                Value::Array(flat) => flat
                    .chunks(2)
                    .find(|pair| pair.first().and_then(text) == Some(wanted.as_bytes()))
                    .and_then(|pair| pair.get(1)),
                Value::Map(pairs) => pairs
                    .iter()
                    .find(|(key, _)| text(key) == Some(wanted.as_bytes()))
                    .map(|(_, value)| value),
                _ => None,
            };
            value.and_then(text)
        };
        let Some(listed_name) = field("library_name") else {
            return Err("a library without library_name".to_owned());
        };
        if listed_name != name.as_bytes() {
            continue;
        }
        return match field("library_code") {
            Some(code) => Ok(Some(code)),
            None => Err(format!("library `{name}` listed without library_code")),
        };
    }
    Ok(None)
}

fn text(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(bytes) => Some(bytes),
        Value::SimpleString(text) => Some(text.as_bytes()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::server_error;

    static LIBRARY: Library = crate::library::new_library(
        "quota_lib",
        "lua/quota_lib.lua",
        "#!lua name=quota_lib\nredis.register_function('f', function() return 1 end)\n",
        "0000000000000000000000000000000000000000",
        &["f"],
    );

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    /// A `FUNCTION LIST WITHCODE` entry as RESP2 sends it.
    fn listed(name: &str, code: &str) -> Value {
        Value::Array(vec![
            bulk("library_name"),
            bulk(name),
            bulk("engine"),
            bulk("LUA"),
            bulk("functions"),
            Value::Array(vec![]),
            bulk("library_code"),
            bulk(code),
        ])
    }

    fn arguments(command: &Cmd) -> Vec<String> {
        command
            .args_iter()
            .map(|argument| match argument {
                redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                _ => "<cursor>".to_owned(),
            })
            .collect()
    }

    fn sent(step: &Step) -> Vec<String> {
        match step {
            Step::Send(command) => arguments(command),
            Step::Done(result) => panic!("expected a command, got {result:?}"),
        }
    }

    fn done(step: Step) -> Result<Deployed, Error> {
        match step {
            Step::Done(result) => result,
            Step::Send(command) => panic!("expected the end, got {:?}", arguments(&command)),
        }
    }

    #[test]
    fn only_the_exact_name_counts_in_the_listing() {
        let reply = Value::Array(vec![
            listed("Quota_Lib", "other case"),
            listed("quota_lib", "the code"),
        ]);
        assert_eq!(listed_code(&reply, "quota_lib"), Ok(Some(&b"the code"[..])));
        assert_eq!(listed_code(&reply, "quota"), Ok(None));
        let resp3 = Value::Array(vec![Value::Map(vec![
            (bulk("library_name"), bulk("quota_lib")),
            (bulk("library_code"), bulk("resp3 code")),
        ])]);
        assert_eq!(
            listed_code(&resp3, "quota_lib"),
            Ok(Some(&b"resp3 code"[..]))
        );
        assert!(listed_code(&Value::Int(1), "quota_lib").is_err());
        assert_eq!(
            arguments(&list_command("a*b")),
            ["FUNCTION", "LIST", "LIBRARYNAME", "a\\*b", "WITHCODE"]
        );
    }

    #[test]
    fn absent_is_loaded_identical_is_left_alone() {
        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Refuse, None);
        let step = deployment.start();
        assert_eq!(
            sent(&step),
            ["FUNCTION", "LIST", "LIBRARYNAME", "quota_lib", "WITHCODE"]
        );
        let step = deployment.received(Ok(Value::Array(vec![])));
        assert_eq!(sent(&step), ["FUNCTION", "LOAD", LIBRARY.source()]);
        assert_eq!(
            done(deployment.received(Ok(bulk("quota_lib")))).ok(),
            Some(Deployed::Loaded)
        );

        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Replace, None);
        deployment.start();
        let identical = Value::Array(vec![listed("quota_lib", LIBRARY.source())]);
        assert_eq!(
            done(deployment.received(Ok(identical))).ok(),
            Some(Deployed::Unchanged)
        );
    }

    #[test]
    fn another_version_is_refused_or_replaced() {
        let other = Value::Array(vec![listed("quota_lib", "old code")]);
        let old_sha1 = sha1_smol::Sha1::from("old code").digest().to_string();

        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Refuse, Some("10.0.0.1:6379"));
        deployment.start();
        match done(deployment.received(Ok(other.clone()))) {
            Err(error @ Error::LibraryConflict { .. }) => {
                assert!(!error.may_have_executed());
                let Error::LibraryConflict {
                    node,
                    deployed_sha1,
                    compiled_sha1,
                    ..
                } = &error
                else {
                    unreachable!()
                };
                assert_eq!(node.as_deref(), Some("10.0.0.1:6379"));
                assert_eq!(deployed_sha1.as_deref(), Some(old_sha1.as_str()));
                assert_eq!(*compiled_sha1, LIBRARY.sha1());
                let message = error.to_string();
                assert!(message.contains("10.0.0.1:6379"), "{message}");
                assert!(message.contains(&old_sha1), "{message}");
                assert!(message.contains(LIBRARY.sha1()), "{message}");
            }
            other => panic!("expected a conflict, got {other:?}"),
        }

        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Replace, None);
        deployment.start();
        let step = deployment.received(Ok(other));
        assert_eq!(
            sent(&step),
            ["FUNCTION", "LOAD", "REPLACE", LIBRARY.source()]
        );
        assert_eq!(
            done(deployment.received(Ok(bulk("quota_lib")))).ok(),
            Some(Deployed::Replaced {
                previous_sha1: old_sha1
            })
        );
    }

    #[test]
    fn a_load_that_finds_the_library_lists_once_more() {
        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Refuse, None);
        deployment.start();
        deployment.received(Ok(Value::Array(vec![])));
        // Loaded by someone else between LIST and LOAD: look again.
        let step = deployment.received(Ok(server_error("ERR Library 'quota_lib' already exists")));
        assert_eq!(sent(&step)[1], "LIST");
        let identical = Value::Array(vec![listed("quota_lib", LIBRARY.source())]);
        assert_eq!(
            done(deployment.received(Ok(identical))).ok(),
            Some(Deployed::Unchanged)
        );

        // A function name held by another library.
        let mut deployment = DeploySteps::new(&LIBRARY, OnConflict::Refuse, None);
        deployment.start();
        deployment.received(Ok(Value::Array(vec![])));
        match done(deployment.received(Ok(server_error("ERR Function f already exists")))) {
            Err(Error::FunctionNameTaken {
                function, library, ..
            }) => assert_eq!((function.as_str(), library), ("f", "quota_lib")),
            other => panic!("expected FunctionNameTaken, got {other:?}"),
        }
    }
}
