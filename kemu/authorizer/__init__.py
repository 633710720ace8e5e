"""Kafka's ACLs and its StandardAuthorizer: bindings and filters (`acls.py`), their store in the data
directory (`store.py`), and the decisions (`standard.py`). Synchronous and socket-free: a handler asks with
the connection's principal and host, and gets a yes or no."""
