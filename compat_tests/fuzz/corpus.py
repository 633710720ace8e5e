"""A corpus of real client requests: confluent-kafka (librdkafka) and kafka-python do a day's work —
admin, idempotent produce in every codec, a transaction, a consumer group that reads and commits — through a
recording proxy in front of `kemu serve`, which advertises the proxy so every request passes through it.
Each frame a client sent is kept, without its size prefix."""

from __future__ import annotations

import socket
import struct
import threading
from contextlib import suppress

SIZE = struct.Struct(">i")


class RecordingProxy:
    """Listens on an ephemeral port; each client connection is piped to the broker, and the client's
    frames are recorded. `upstream` is set once the broker's port is known (after the proxy's is)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.upstream: tuple[str, int] | None = None
        self.frames: list[bytes] = []
        self._lock = threading.Lock()
        self._closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="fuzz-proxy", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        for sock in self._sockets:
            with suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            assert self.upstream is not None
            server = socket.create_connection(self.upstream)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, record: bool) -> None:
        pending = bytearray()
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
                if record:
                    pending += chunk
                    self._take_frames(pending)
        except OSError:
            pass
        for sock in (source, target):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _take_frames(self, pending: bytearray) -> None:
        while len(pending) >= SIZE.size:
            (size,) = SIZE.unpack_from(pending)
            if len(pending) < SIZE.size + size:
                return
            with self._lock:
                self.frames.append(bytes(pending[SIZE.size:SIZE.size + size]))
            del pending[:SIZE.size + size]


def drive_clients(bootstrap: str, topic: str = "fuzz-corpus") -> None:
    """The client work whose requests make the corpus (bounded: a few seconds)."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
    from kafka import KafkaConsumer, KafkaProducer

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 3, 1, config={"retention.ms": "86400000"})]).values():
        future.result(30)
    for future in admin.describe_configs([ConfigResource("topic", topic)]).values():
        future.result(30)
    admin.list_topics(timeout=30)

    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                             "compression.type": codec, "linger.ms": 5})
        for i in range(20):
            producer.produce(topic, key=f"k{i}".encode(), value=f"{codec}-{i}".encode() * 5,
                             headers=[("h", b"v")], partition=i % 3)
        assert producer.flush(30) == 0

    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "fuzz-corpus-txn"})
    txn.init_transactions(30)
    txn.begin_transaction()
    txn.produce(topic, value=b"in a transaction", partition=0)
    txn.commit_transaction(30)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "fuzz-corpus-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = 0
    for _ in range(60):
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            seen += 1
            if seen >= 20:
                break
    consumer.commit(asynchronous=False)
    consumer.committed([TopicPartition(topic, 0)], timeout=30)
    consumer.close()

    kp = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    kp.send(topic, b"kafka-python", partition=1).get(30)
    kp.close()
    kc = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id="fuzz-corpus-kp",
                       auto_offset_reset="earliest", consumer_timeout_ms=3000)
    for _ in kc:
        break
    kc.commit()
    kc.close()
