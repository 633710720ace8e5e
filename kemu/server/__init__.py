"""The Trio I/O shell around the broker core: listeners, connections, framing, in-order responses."""

from kemu.server.listener import serve

__all__ = ["serve"]
