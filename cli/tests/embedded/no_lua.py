"""Mentions redis.call('GET', key) in prose, which is not a script."""

GREETING = "hello"
QUERY = 'SELECT * FROM t WHERE name = "redis.call"'
