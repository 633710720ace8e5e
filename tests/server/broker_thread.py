"""A kemu broker served on a real socket by the wire harness (kemu.testing.harness.SocketBroker), with this
directory's blocking client: what tests of the server itself talk to. kemu.testing.harness.InProcessBroker
has the same surface without the sockets."""

from __future__ import annotations

from kemu.testing.harness import SocketBroker
from tests.server.kafka_socket import KafkaSocket


class BrokerThread(SocketBroker):
    def connect(self, client_id: str | None = "kemu-tests") -> KafkaSocket:
        return KafkaSocket(self.address, client_id)
