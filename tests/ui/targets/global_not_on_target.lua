return server.call('GET', KEYS[1])
