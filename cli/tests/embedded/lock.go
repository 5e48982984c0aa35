package lock

import "github.com/redis/go-redis/v9"

// Releases the lock only if the token still owns it.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0
`)

const extendSrc = "if redis.call('GET', KEYS[1]) == ARGV[1] then\n" +
	"  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n" +
	"end\nreturn 0"

var legacy = redigo.NewScript(1, `return redis.call("GETT", KEYS[1])`)

func extend(ctx context.Context, rdb *redis.Client) {
	rdb.Eval(ctx, extendSrc, []string{"lock"}, "token", 1000)
	rdb.Eval(ctx, "return redis.call('INCR', KEYS[2])", []string{"a"})
}

const notLua = "redis.call is mentioned in this sentence, which is not Lua"

func unlock(ctx context.Context, rdb *redis.Client, key, token string) error {
	return release.Run(ctx, rdb, []string{key}, token, "extra").Err()
}
