class Limiter:
    LUA_TAKE = """
    local n = redis.call('INCR', KEYS[1])
    if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
    return n
    """

    def __init__(self, r):
        self.take = r.register_script(self.LUA_TAKE)

    def peek(self, r, key):
        return r.eval("return redis.call('GET', KEYS[1]) + 0", 1, key)

    DOC = f"uses {redis_call} inside"
