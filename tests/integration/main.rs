//! Integration tests against real `redis-server` (or, with
//! `REDIS_SCRIPT_TEST_SERVER=valkey`, `valkey-server`) processes started on
//! free loopback ports: a standalone server and a 3-primary cluster with one
//! replica each. Every scenario runs on both.

/// Runs each `$scenario(connection, stats)` once against a fresh standalone
/// server and once against a fresh 3-primary cluster (with as many
/// replicas per primary as asked, none by default).
macro_rules! on_both_backends {
    (replicas = $replicas:literal; $($scenario:ident),* $(,)?) => {
        mod standalone {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let server = redis_script_test::RedisServer::start();
                    let mut connection = server.connection().await;
                    super::$scenario(&mut connection, &server).await;
                }
            )*
        }
        mod cluster {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let cluster = redis_script_test::RedisCluster::start(3, $replicas);
                    let mut connection = cluster.connection().await;
                    super::$scenario(&mut connection, &cluster).await;
                }
            )*
        }
    };
    ($($scenario:ident),* $(,)?) => {
        on_both_backends!(replicas = 0; $($scenario),*);
    };
}

mod acl_rules;
mod argument_groups;
mod batches;
mod batches_across_slots;
mod bit_width;
mod blocking;
mod built;
mod calls;
mod corpus;
mod deadlines;
mod derived_keys;
mod endless_loops;
mod exactly_once;
mod exactly_once_faults;
mod failover;
mod fault_kit;
mod faults;
mod flush_storm;
mod forged_refusals;
mod functions;
mod json_oracle;
mod json_round_trip;
mod key_oracle;
mod keys_as_values;
mod keys_from_data;
mod lua_advisories;
mod lua_engine;
mod preload;
mod read_only_fallback;
mod releases;
mod replicas;
mod replies;
mod reply_conversions;
mod reply_forms;
mod reply_metatables;
mod restricted_users;
mod sent_arguments;
mod sentinel;
mod server_refusals;
mod servers;
mod single_command;
mod slots;
mod telemetry;
mod unbounded_unpack;
mod workflows;
