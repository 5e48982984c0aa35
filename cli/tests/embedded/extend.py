EXTEND_SCRIPT = """
if redis.call("get", KEYS[1]) ~= ARGV[1] then
    return 1
elseif redis.call("ttl", KEYS[1]) < 0 then
    return 2
else
    redis.call("expire", KEYS[1], ARGV[2])
    return 0
end
"""


class Lock:
    def __init__(self, redis_client, name):
        self.redis = redis_client
        self.name = name
        self.extend_script = self.redis.register_script(EXTEND_SCRIPT)

    def extend(self, token, expire):
        # The third argument is never read: the call's lists give the counts.
        return self.extend_script(keys=[self.name], args=[token, expire, "spare"])
