//! A pipeline across slots through redis-rs's cluster connection
//! ([`run_batch`]): the send loop of the [`Engine`], each request one
//! slot's transaction routed to the slot's primary, all of a round at
//! once.

use std::sync::Arc;

use redis::Pipeline;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};

use super::engine::{Connections, Destination, Engine, Step};
use super::{Batch, Replies};
use crate::error::Error;

/// Runs `batch` on a cluster: a transaction is sent as it is (its calls
/// share one slot); a pipeline as one transaction per slot, each sent to
/// the slot's primary, all at once (see the [cluster guide](crate::guide::cluster)). Replies come
/// in the order the commands were queued.
///
/// Calls of one slot run in the order they were queued, with no other
/// command between them; calls of different slots run on different nodes,
/// in no promised order (as on the server). A slot's node that fails (or
/// is not reached within the batch's deadline) fails that slot's calls,
/// each with an error saying whether it may have run; the other slots'
/// calls get their replies. A slot's transaction of nothing but calls of
/// `exactly_once` scripts is sent again after a connection failure, as
/// [`Batch::run`] sends such a batch again.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::cluster_async::ClusterConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{Batch, cluster, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let mut batch = Batch::pipeline();
/// let first = batch.add(release_lock::call("lock:{a}", "token-a"))?;
/// let second = batch.add(release_lock::call("lock:{b}", "token-b"))?;
/// let mut replies = cluster::run_batch(connection, &batch).await?;
/// let released = replies.take(first)? + replies.take(second)?;
/// # let _ = released;
/// # Ok(()) }
/// ```
pub async fn run_batch(
    connection: &mut ClusterConnection,
    batch: &Batch,
) -> Result<Replies, Error> {
    if batch.atomic || batch.entries.is_empty() {
        return batch.run(connection).await;
    }
    let engine = Engine::new(Connections::Cluster, batch, None);
    batch.run_across_slots(send(connection, engine)).await
}

/// Sends what `engine` plans until every transaction has its outcome.
async fn send<'b>(connection: &mut ClusterConnection, mut engine: Engine<'b>) -> Engine<'b> {
    loop {
        match engine.next() {
            Step::Done => return engine,
            Step::Wait(delay) => crate::timer::sleep(delay).await,
            Step::ReadSlotMap => {
                let read = crate::topology::slot_map(connection).await.map(Arc::new);
                engine.slot_map_read(read);
            }
            Step::Send(mut requests) => {
                let sends = requests.iter_mut().map(|request| {
                    let mut connection = connection.clone();
                    let pipeline = std::mem::replace(&mut request.pipeline, Pipeline::new());
                    let route = route(&request.destination);
                    async move {
                        let count = pipeline.len();
                        connection.route_pipeline(pipeline, 0, count, route).await
                    }
                });
                let answers = futures_util::future::join_all(sends).await;
                for (request, answer) in requests.iter().zip(answers) {
                    engine.answered(request, answer);
                }
            }
        }
    }
}

/// How the cluster connection routes a request to `destination`.
fn route(destination: &Destination) -> SingleNodeRoutingInfo {
    match destination {
        Destination::Slot(Some(slot)) => {
            SingleNodeRoutingInfo::SpecificNode(Route::new(*slot, SlotAddr::Master))
        }
        Destination::Slot(None) => SingleNodeRoutingInfo::RandomPrimary,
        Destination::Node((host, port)) => SingleNodeRoutingInfo::ByAddress {
            host: host.clone(),
            port: *port,
        },
    }
}
