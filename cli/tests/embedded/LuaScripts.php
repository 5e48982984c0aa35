<?php
class LuaScripts
{
    public static function size()
    {
        return <<<'LUA'
return redis.call('llen', KEYS[1]) + redis.call('zcard', KEYS[2])
LUA;
    }

    public static function pop()
    {
        return "local job = redis.call('lpop', KEYS[1])\nreturn job";
    }
}
$redis->eval(LuaScripts::size(), 2, 'q', 'q:delayed');
