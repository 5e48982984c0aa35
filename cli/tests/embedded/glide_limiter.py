"""A sliding-window limiter and a token bucket on Valkey, through GLIDE."""

from glide import GlideClient, Script

# Help text of the admin RPC, not a script.
RPC_USAGE = "server.call(method, params) runs one admin command"

SLIDING_WINDOW = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
server.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = server.call('ZCARD', key)
if count >= limit then
    return {0, count}
end
server.call('ZADD', key, now, ARGV[4])
server.call('PEXPIRE', key, window)
return {1, count + 1}
"""

TOKEN_BUCKET = """
local state = server.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or tonumber(ARGV[1])
local at = tonumber(state[2]) or tonumber(ARGV[3])
local refill = (tonumber(ARGV[3]) - at) * tonumber(ARGV[2]) / 1000
tokens = math.min(tonumber(ARGV[1]), tokens + refill)
if tokens < 1 then
    return server.error_reply('EMPTY bucket')
end
server.call('HSET', KEYS[1], 'tokens', tokens - 1, 'at', ARGV[3])
return math.floor(tokens - 1)
"""


class Limiter:
    def __init__(self, client: GlideClient, prefix: str):
        self._client = client
        self._window = Script(SLIDING_WINDOW)
        self._bucket = Script(TOKEN_BUCKET)
        self._peek = Script(f"return server.call('ZCARD', '{prefix}' .. KEYS[1])")

    async def hit(self, key: str, now_ms: int, window_ms: int, limit: int, member: str):
        return await self._client.invoke_script(
            self._window, keys=[key], args=[str(now_ms), str(window_ms), str(limit), member]
        )

    async def take(self, key: str, capacity: int, per_second: int, now_ms: int):
        return await self._client.invoke_script(
            self._bucket, keys=[key], args=[str(capacity), str(per_second), str(now_ms)]
        )
