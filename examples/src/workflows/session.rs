//! Session touch (`lua/session_touch.lua`): the session hash
//! `session:{user}:<id>` and the user's index `user-sessions:{user}` are
//! updated in one atomic script. Both keys carry the user as a
//! `{hash tag}`, so they share a Cluster slot; keys without it fail with
//! [`redis_script::Error::CrossSlot`] before anything is sent.

use redis_script::{ScriptReply, redis_script};

/// What a touch leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ScriptReply)]
pub struct Touch {
    /// How many times this session has been touched, this one included.
    pub touches: u64,
    /// The user's live sessions (in the index after pruning expired ones).
    pub sessions: u64,
    /// When the session now expires, in ms since the Unix epoch (server clock).
    pub expires_at_ms: u64,
}

/// Refreshes `session` (a hash) and its entry `session_id` in the user's
/// `index` (a sorted set scored by expiry) together, for `ttl_ms` from now.
#[redis_script(path = "../lua/session_touch.lua", keys = 2)]
pub async fn session_touch(
    session: &str,
    index: &str,
    session_id: &str,
    ttl_ms: u64,
    client: &str,
) -> Touch;

/// The key of a session's hash: `session:{user}:session_id`.
pub fn session_key(user: &str, session_id: &str) -> String {
    format!("session:{{{user}}}:{session_id}")
}

/// The key of a user's session index: `user-sessions:{user}`.
pub fn index_key(user: &str) -> String {
    format!("user-sessions:{{{user}}}")
}

/// Touches `session_id` of `user`, building both keys with the user as
/// their hash tag.
pub async fn touch<C>(
    connection: &mut C,
    user: &str,
    session_id: &str,
    ttl_ms: u64,
    client: &str,
) -> Result<Touch, redis_script::Error>
where
    C: redis::aio::ConnectionLike + Send,
{
    session_touch(
        connection,
        &session_key(user, session_id),
        &index_key(user),
        session_id,
        ttl_ms,
        client,
    )
    .await
}
