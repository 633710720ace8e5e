"""The running-server fuzzer: random and mutated frames from a corpus of real client requests, over many
connections, against one `kemu serve`; after every `check_every` frames a fresh connection must get
ApiVersions and Metadata answered within `deadline_s`, and the canary records written before the run must
read back whole. A connection the broker closes is replaced; one whose request stays unanswered
(a long-poll Fetch, a JoinGroup waiting for a rebalance, an acks=0 Produce) is abandoned and replaced too.

Some APIs are kept out of the mutated corpus (never out of the random bytes): the destructive ones
(DeleteTopics, DeleteRecords, AlterConfigs, IncrementalAlterConfigs, DeleteGroups), whose well-formed
mutations would delete what the canary check reads, and CreateTopics/CreatePartitions, whose mutated
counts would spend the run creating thousands of partitions (each refused past 10,000, and bounded then).
"""

from __future__ import annotations

import random
import select
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kemu.wire import codec
from kemu.wire.records import iter_batches

SIZE = struct.Struct(">i")
HEADER = struct.Struct(">hhi")
KEPT_OUT = {19, 20, 21, 33, 37, 42, 44}
EXTREMES = [b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\x80\x00\x00\x00", b"\x00\x00\x00\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\x7f", b"\x7f\xff", b"\xff\xff", b"\x00"]
STUCK_S = 1.0
CANARY = "fuzz-canary"


@dataclass
class Stats:
    sent: int = 0
    answered: int = 0
    closed: int = 0  # connections the broker closed
    abandoned: int = 0  # connections given up with requests outstanding
    checks: int = 0
    slowest_check_s: float = 0.0
    structured: int = 0  # frames built from the specs (structured.py) among those sent
    tracebacks: int = 0  # tracebacks the broker printed, counted by the session at the end

    def line(self) -> str:
        return (f"frames sent {self.sent} ({self.structured} structure-aware), answered {self.answered}, "
                f"connections closed by the broker {self.closed}, abandoned {self.abandoned}, liveness checks "
                f"{self.checks} (slowest {self.slowest_check_s * 1000:.0f} ms), tracebacks {self.tracebacks}, "
                f"crashes 0")


class FuzzFailure(AssertionError):
    pass


@dataclass
class _Conn:
    sock: socket.socket
    inbox: bytearray = field(default_factory=bytearray)
    outstanding: int = 0
    since: float = 0.0


class ServerFuzzer:
    def __init__(self, address: tuple[str, int], corpus: list[bytes], *, seed: int = 0, connections: int = 16,
                 check_every: int = 1000, deadline_s: float = 1.0, canary: list[bytes] | None = None,
                 alive: Callable[[], bool] = lambda: True, structured: Callable[[], bytes] | None = None,
                 structured_share: float = 0.0) -> None:
        self.address = address
        self.replay = [frame for frame in corpus if len(frame) >= HEADER.size]
        self.mutable = [frame for frame in self.replay if HEADER.unpack_from(frame)[0] not in KEPT_OUT]
        self.random = random.Random(seed)
        self.width = connections
        self.check_every = check_every
        self.deadline_s = deadline_s
        self.canary = canary or []
        self.alive = alive
        self.stats = Stats()
        self.conns: list[_Conn] = []
        self.structured = structured
        self.structured_share = structured_share if structured is not None else 0.0

    def run(self, frames: int, progress: Callable[[Stats], None] | None = None,
            seconds: float | None = None) -> Stats:
        """Send `frames` frames, or (given `seconds`) as many as that time allows."""
        self.conns = [self._open() for _ in range(self.width)]
        next_check = self.check_every
        until = None if seconds is None else time.monotonic() + seconds
        if until is not None:
            frames = 2**62
        try:
            while self.stats.sent < frames:
                if until is not None and time.monotonic() >= until:
                    break
                # Lock-step per connection: a frame goes only to a connection whose last one was answered,
                # so none is wasted on a connection the broker has already closed.
                for index, conn in enumerate(self.conns):
                    if conn.outstanding == 0 and self.stats.sent < min(frames, next_check):
                        self._send(index)
                self._drain(0.02)
                self._abandon_stuck()
                if self.stats.sent >= min(frames, next_check):
                    self._drain(0.05)
                    self.check()
                    next_check += self.check_every
                    if progress is not None:
                        progress(self.stats)
        finally:
            for conn in self.conns:
                conn.sock.close()
        return self.stats

    # --- frames ------------------------------------------------------------------------------------------

    def next_frame(self) -> bytes:
        if self.structured is not None and self.random.random() < self.structured_share:
            self.stats.structured += 1
            body = self.structured()
            return SIZE.pack(len(body)) + body
        roll = self.random.random()
        if roll < 0.1 or not self.mutable:
            body = self.random.randbytes(self.random.randint(0, 256))
        elif roll < 0.3:
            body = self.random.choice(self.replay)
        else:
            body = self._mutate(bytearray(self.random.choice(self.mutable)))
        if self.random.random() < 0.01:
            return SIZE.pack(self.random.choice([-1, 2**31 - 1, 104_857_601])) + body
        return SIZE.pack(len(body)) + body

    def _mutate(self, data: bytearray) -> bytes:
        rnd = self.random
        for _ in range(rnd.randint(1, 4)):
            at = rnd.randint(0, len(data))
            kind = rnd.randrange(6)
            if kind == 0 and data:
                data[min(at, len(data) - 1)] ^= 1 << rnd.randrange(8)
            elif kind == 1:
                del data[max(at, HEADER.size):]
            elif kind == 2:
                data[at:at + 4] = rnd.choice(EXTREMES)
            elif kind == 3:
                data[at:at] = rnd.randbytes(rnd.randint(1, 16))
            elif kind == 4 and data:
                start = rnd.randrange(len(data))
                data[at:at] = data[start:start + rnd.randint(1, 32)] * rnd.randint(1, 64)
            elif kind == 5 and len(data) >= 4:
                data[2:4] = struct.pack(">h", rnd.randint(-1, 20))  # another version of the same API
        return bytes(data)

    # --- connections -------------------------------------------------------------------------------------

    def _open(self) -> _Conn:
        sock = socket.create_connection(self.address, timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(5)
        return _Conn(sock)

    def _replace(self, index: int) -> None:
        self.conns[index].sock.close()
        self.conns[index] = self._open()

    def _send(self, index: int) -> None:
        conn = self.conns[index]
        try:
            conn.sock.sendall(self.next_frame())
            conn.outstanding = 1
            conn.since = time.monotonic()
        except (BrokenPipeError, ConnectionResetError, BlockingIOError):
            self.stats.closed += 1
            self._replace(index)
        self.stats.sent += 1

    def _abandon_stuck(self) -> None:
        """A request that waits by design (a JoinGroup for its rebalance, an acks=0 Produce never answered)
        holds its connection: give it up after a while and go on with a fresh one."""
        now = time.monotonic()
        for index, conn in enumerate(self.conns):
            if conn.outstanding and now - conn.since > STUCK_S:
                self.stats.abandoned += 1
                self._replace(index)

    def _drain(self, wait_s: float) -> None:
        socks = [conn.sock for conn in self.conns]
        ready, _, _ = select.select(socks, [], [], wait_s)
        for sock in ready:
            index = socks.index(sock)
            conn = self.conns[index]
            try:
                chunk = sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self.stats.closed += 1
                self._replace(index)
                continue
            conn.inbox += chunk
            while len(conn.inbox) >= SIZE.size:
                (size,) = SIZE.unpack_from(conn.inbox)
                if len(conn.inbox) < SIZE.size + size:
                    break
                del conn.inbox[:SIZE.size + size]
                self.stats.answered += 1
                conn.outstanding = max(0, conn.outstanding - 1)

    # --- checks ------------------------------------------------------------------------------------------

    def check(self) -> None:
        if not self.alive():
            raise FuzzFailure(f"the broker process died after {self.stats.sent} frames")
        started = time.monotonic()
        with socket.create_connection(self.address, timeout=self.deadline_s) as sock:
            sock.settimeout(self.deadline_s)
            versions = _exchange(sock, 18, 3, {"client_software_name": "fuzz", "client_software_version": "1"})
            metadata = _exchange(sock, 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
        took = time.monotonic() - started
        self.stats.checks += 1
        self.stats.slowest_check_s = max(self.stats.slowest_check_s, took)
        if versions["error_code"] != 0 or not metadata["brokers"]:
            raise FuzzFailure(f"liveness answers wrong after {self.stats.sent} frames: {versions} {metadata}")
        if took > self.deadline_s:
            raise FuzzFailure(f"ApiVersions and Metadata took {took:.2f} s after {self.stats.sent} frames")
        if self.canary and read_canary(self.address, len(self.canary)) != self.canary:
            raise FuzzFailure(f"the canary records are no longer whole after {self.stats.sent} frames")


def _exchange(sock: socket.socket, key: int, version: int, body: dict[str, object]) -> dict[str, object]:
    payload = codec.encode_request(key, version, 1, body, client_id="fuzz-check")
    sock.sendall(SIZE.pack(len(payload)) + payload)
    (size,) = SIZE.unpack(_exactly(sock, SIZE.size))
    return codec.decode_response(key, version, _exactly(sock, size))[1]


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise FuzzFailure("the broker closed a liveness-check connection")
        data += chunk
    return bytes(data)


def read_canary(address: tuple[str, int], count: int) -> list[bytes]:
    """The values of the canary partition's first `count` records, read with a plain Fetch v4."""
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 50 * 1024 * 1024,
            "isolation_level": 0, "topics": [{"topic": CANARY, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 50 * 1024 * 1024}]}]}
    with socket.create_connection(address, timeout=10) as sock:
        response = _exchange(sock, 1, 4, body)
    [topic] = response["responses"]  # type: ignore[misc]
    [partition] = topic["partitions"]
    values: list[bytes] = []
    for batch in iter_batches(partition["records"] or b""):
        values.extend(bytes(r.value or b"") for r in batch.records())
    return values[:count]
