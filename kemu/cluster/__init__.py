"""The cluster's core state: broker config, node and cluster ids, and the topic registry.

Plain synchronous Python that knows nothing of sockets; the server and the handlers drive it from the
Trio thread, so it needs no locks. Time, where it is needed, comes from an injected clock.
"""
