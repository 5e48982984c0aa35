class Queue
  LUA_POP = <<~LUA
    local job = redis.call("zrangebyscore", KEYS[1], "-inf", ARGV[1], "limit", 0, 1)[1]
    if job then
      redis.call("zrem", KEYS[1], job)
    end
    return job
  LUA

  def push(redis, job)
    redis.eval(<<~'LUA', keys: [@key], argv: [job])
      return redis.call('rpush', KEYS[1], ARGV[1], ARGV[2])
    LUA
  end
end
