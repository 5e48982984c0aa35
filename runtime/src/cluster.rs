//! Redis Cluster: hash slots, and scripts and libraries on every node.
//!
//! A call checks that its keys share one slot before anything is sent
//! ([`Error::CrossSlot`] lists each key with its [`KeySlot`]);
//! [`key_slot`] computes the slot the same way, to pick keys ahead of
//! time. With the `cluster` feature, [`preload`] loads scripts on every
//! node and [`deploy`] deploys libraries on every primary; both return a
//! [`Report`] with one outcome per node and script or library, and a
//! pipeline [`Batch`](crate::Batch) across slots goes to every primary at
//! once with [`NodeConnections::run_batch`] (or [`run_batch`]).
//!
//! ```
//! use redis_script::cluster::{SLOT_COUNT, key_slot};
//!
//! let slot = key_slot(b"queue:{emails}:pending");
//! assert!(slot < SLOT_COUNT);
//! assert_eq!(slot, key_slot(b"queue:{emails}:done"));
//! ```

#[cfg(feature = "cluster")]
pub use crate::batch::cluster_connection::run_batch;
#[cfg(feature = "cluster")]
pub use crate::batch::node_connections::NodeConnections;
#[cfg(feature = "cluster")]
pub use crate::deploy::deploy_cluster as deploy;
pub use crate::error::KeySlot;
#[cfg(feature = "cluster")]
pub use crate::preload::preload_cluster as preload;
pub use crate::slot::{SLOT_COUNT, key_slot};

#[cfg(feature = "cluster")]
use crate::{Deployed, Error, LuaAdvisory, ServerVersion};

/// What [`preload`] or [`deploy`] did: one outcome per node and script
/// (preload, on every node) or per primary and library (deploy), in the
/// order `CLUSTER SLOTS` lists the nodes, then the order given.
///
/// A node that cannot be reached, or that refuses, does not stop the
/// others: its outcomes say why.
///
/// ```
/// # fn demo(report: &redis_script::cluster::PreloadReport) {
/// for failed in report.failed() {
///     eprintln!("{} on {}: {:?}", failed.name, failed.address, failed.outcome);
/// }
/// for node in report.exposed() {
///     let ids: Vec<&str> = node.advisories.iter().map(|advisory| advisory.id).collect();
///     eprintln!("{} runs {:?}, exposed to {}", node.address, node.server, ids.join(", "));
/// }
/// # }
/// ```
#[cfg(feature = "cluster")]
#[derive(Debug)]
#[non_exhaustive]
pub struct Report<T> {
    /// Every node's outcome for every script or library.
    pub outcomes: Vec<NodeOutcome<T>>,
    /// The release of each node that answered `INFO server` after the
    /// work, with the known vulnerabilities of its Lua engine, in the
    /// order of `outcomes`. A node that could not be reached, or refused
    /// `INFO` (a user without permission for it), has no entry: that is
    /// never an error.
    pub servers: Vec<NodeServer>,
}

/// What one node said of its release, in a [`Report`].
#[cfg(feature = "cluster")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeServer {
    /// `host:port`, as `CLUSTER SLOTS` names the node.
    pub address: String,
    /// Its release, as `INFO server` names it.
    pub server: ServerVersion,
    /// The known Lua-engine vulnerabilities of that release, by the table
    /// of [`lua_advisories`](crate::lua_advisories); empty when the table
    /// knows of none.
    pub advisories: Vec<LuaAdvisory>,
}

/// What [`preload`] did: `Ok(())` where a node loaded a script with the
/// SHA1 computed at compile time.
#[cfg(feature = "cluster")]
pub type PreloadReport = Report<()>;

/// What [`deploy`] did: where a library is in this build's version, whether
/// it was loaded, unchanged or replaced.
#[cfg(feature = "cluster")]
pub type DeployReport = Report<Deployed>;

/// The outcome of one script or library on one node, in a [`Report`].
#[cfg(feature = "cluster")]
#[derive(Debug)]
#[non_exhaustive]
pub struct NodeOutcome<T> {
    /// `host:port`, as `CLUSTER SLOTS` names the node.
    pub address: String,
    /// The script's or library's name.
    pub name: &'static str,
    /// What happened there, or why it failed ([`Error::LibraryConflict`]
    /// names the version a node holds).
    pub outcome: Result<T, Error>,
}

#[cfg(feature = "cluster")]
impl<T> Report<T> {
    /// True when every script or library is on every node it was sent to.
    pub fn is_complete(&self) -> bool {
        self.outcomes.iter().all(|node| node.outcome.is_ok())
    }

    /// The outcomes that succeeded.
    pub fn succeeded(&self) -> impl Iterator<Item = &NodeOutcome<T>> {
        self.outcomes.iter().filter(|node| node.outcome.is_ok())
    }

    /// The outcomes that failed: an unreachable node, a refusal, another
    /// SHA1 or another version of a library.
    pub fn failed(&self) -> impl Iterator<Item = &NodeOutcome<T>> {
        self.outcomes.iter().filter(|node| node.outcome.is_err())
    }

    /// The outcome of the script or library `name` on the node at `address`
    /// (`host:port`).
    pub fn outcome(&self, address: &str, name: &str) -> Option<&Result<T, Error>> {
        self.outcomes
            .iter()
            .find(|node| node.address == address && node.name == name)
            .map(|node| &node.outcome)
    }

    /// The release of the node at `address` (`host:port`) and its Lua
    /// engine's advisories; `None` when it did not say.
    pub fn server(&self, address: &str) -> Option<&NodeServer> {
        self.servers.iter().find(|node| node.address == address)
    }

    /// The nodes whose release is exposed to a known Lua-engine
    /// vulnerability.
    pub fn exposed(&self) -> impl Iterator<Item = &NodeServer> {
        self.servers
            .iter()
            .filter(|node| !node.advisories.is_empty())
    }

    /// Records what `INFO server` said of the node at `address`.
    pub(crate) fn saw(&mut self, address: &str, seen: crate::lua_advisories::Seen) {
        if let Some(server) = seen.server {
            self.servers.push(NodeServer {
                address: address.to_owned(),
                server,
                advisories: seen.advisories,
            });
        }
    }
}
