"""The HTTP server of /healthz and /metrics (server.py, aiohttp), its log of requests it
could not parse (requestlog.py), and the `host:port` an HTTP listener binds (listen.py,
standard library only)."""
