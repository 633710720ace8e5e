"""The order of one connection's requests and responses, with no I/O (h11's way: fed events, asked what next).

A Kafka broker runs a connection's requests one at a time and answers them in the order they came. kemu
lets a request that waits (a long poll, a JoinGroup) step aside so the next one can start, so requests may
finish out of order; this keeps their answers in order all the same:

- every admitted request holds a `Slot` in the queue, in arrival order, until its answer has been written:
  `admit()` for one a handler will answer (`finish(slot, ...)` once it has), `answered(...)` for one answered
  at once (an ApiVersions version the broker lacks, a SASL step, a refusal that closes the connection);
- `next_to_send()` is the head once it is finished, which the writer writes (if it has a payload: an acks=0
  Produce has none but keeps its place) and then reports with `sent(slot)`; a slot that closes the
  connection ends the writing there, so the answers before it still go out first;
- the turn at the core passes from one request to the next in arrival order: `take_turn(slot)` queues a
  request for it (True: it is its turn now), `end_turn(slot)` passes it on when the request finished or
  stepped aside, returning the request whose turn begins (whose waiter the caller wakes);
- `full()`: admit nothing more until some answers are written (too many owed, or too many bytes of finished
  answers held in memory for a slow reader);
- a quota's throttle mutes the connection (`mute`, `muted_for`): nothing more is admitted until it ends;
- `quiet_for` and `idle_expired`: connections.max.idle.ms, counted from the last activity the caller notes.

The server's connection (kemu/server/connection.py) drives one with a socket, and the in-process harness of
the tests (kemu/testing/harness.py) with none. Nothing here knows of Trio, sockets or time but the numbers
it is given.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from kemu.broker.owed_answers import OwedAnswers
from kemu.wire.buffers import Part, memory_size


class Slot:
    """One request's place in the response order."""

    __slots__ = ("done", "payload", "size", "held", "close", "close_delay_s", "waiter")

    def __init__(self) -> None:
        self.done = False
        self.payload: Sequence[Part] | None = None  # the answer without its size prefix; None: nothing to send
        self.size = 0  # bytes of the payload
        self.held = 0  # of them, those in memory (not in regions of files)
        self.close = False  # close the connection once everything before it, and it, has been sent
        self.close_delay_s = 0.0  # and this long after its payload went out
        # What the caller wakes when the slot's turn at the core comes (e.g. an event); this module only keeps it.
        self.waiter: Any = None


class RequestOrder:
    __slots__ = ("_queue", "_turns", "_max_pending", "_max_buffered", "buffered", "closing", "close_answered",
                 "muted_until_ms", "last_activity", "_owed")

    def __init__(self, max_pending: int, max_buffered_bytes: int, now: float = 0.0,
                 owed: OwedAnswers | None = None) -> None:
        self._queue: deque[Slot] = deque()  # admitted requests, oldest first, until their answer has been sent
        self._turns: deque[Slot] = deque()  # requests holding (the first) or waiting for the turn at the core
        self._max_pending = max_pending
        self._max_buffered = max_buffered_bytes
        self.buffered = 0  # bytes of finished answers not yet sent, those held in memory
        self.closing = False  # a closing slot has been sent: send nothing more
        self.close_answered = False  # some finished slot closes the connection (later requests will go unanswered)
        self.muted_until_ms = 0  # until when (the broker clock's ms) a throttle mutes the connection; 0: not muted
        self.last_activity = now  # when something was last received or sent (the caller's clock)
        self._owed = owed  # the broker's count of owed answer bytes, which `buffered` is part of

    # ---- admission ----
    @property
    def owed(self) -> int:
        """Admitted requests whose answer (or close) has not gone out yet."""
        return len(self._queue)

    def full(self) -> bool:
        """Whether to admit nothing more until some answers have been sent."""
        return self.buffered > self._max_buffered or len(self._queue) >= self._max_pending

    def admit(self) -> Slot:
        """A request a handler will answer (`finish`), in its place."""
        slot = Slot()
        self._queue.append(slot)
        return slot

    def answered(self, payload: Sequence[Part] | None, *, close: bool = False,
                 close_delay_s: float = 0.0) -> Slot:
        """A request answered at once, in its place: with `payload`, or with none; `close` after it (and
        `close_delay_s` later)."""
        slot = Slot()
        slot.close_delay_s = close_delay_s
        self._queue.append(slot)
        self.finish(slot, payload, close)
        return slot

    def finish(self, slot: Slot, payload: Sequence[Part] | None, close: bool = False) -> None:
        """`slot`'s answer is ready: `payload` (None: none is sent), and whether to close after it."""
        slot.payload, slot.close = payload, close
        if payload is not None:
            slot.size = sum(len(part) for part in payload)
            # Only what is in memory counts, here and in the broker's bound: a region of a segment file
            # (kemu.wire.file_region) is sent from the page cache, as Kafka's sendfile does, and what it keeps
            # is a descriptor shared per segment file. How many regions a slow reader can keep waiting is
            # bounded by `max_pending` answers, as Kafka's is by its one muted response.
            slot.held = held = memory_size(payload)
            self.buffered += held
            if self._owed is not None:
                self._owed.used += held
        if close:
            self.close_answered = True
        slot.done = True

    def abandon(self, slot: Slot) -> None:
        """`slot`'s request ended without an answer (its handler raised through): nothing is sent for it, and
        the answers after it are not held back."""
        slot.done = True

    # ---- writing ----
    def next_to_send(self) -> Slot | None:
        """The answer to write now: the oldest request's, once finished; None while it is not (or once the
        connection is closing)."""
        queue = self._queue
        if queue and queue[0].done and not self.closing:
            return queue[0]
        return None

    def sent(self, slot: Slot) -> bool:
        """`slot` (what `next_to_send` gave) has been written; True: close the connection now (after its
        `close_delay_s`)."""
        popped = self._queue.popleft()
        assert popped is slot, "answers are sent in request order"
        self.buffered -= slot.held
        if self._owed is not None:
            self._owed.used -= slot.held
        if slot.close:
            self.closing = True
        return slot.close

    def release(self) -> None:
        """The connection is gone: what it still owed is owed no more."""
        if self._owed is not None:
            self._owed.used -= self.buffered
            self._owed = None
        self.buffered = 0

    # ---- the turn at the core ----
    @property
    def turn_free(self) -> bool:
        """No request holds the turn or waits for it: the next may run at once."""
        return not self._turns

    def take_turn(self, slot: Slot) -> bool:
        """Queue `slot`'s request for the turn at the core; True: the turn is its own now."""
        self._turns.append(slot)
        return len(self._turns) == 1

    def end_turn(self, slot: Slot) -> Slot | None:
        """`slot`'s request is done with the core (finished, stepped aside to wait, or cancelled); returns the
        request whose turn begins now, if one waits. Ending a turn twice is harmless."""
        turns = self._turns
        if turns and turns[0] is slot:
            turns.popleft()
            return turns[0] if turns else None
        if slot in turns:
            turns.remove(slot)  # cancelled before its turn came: the one holding the turn keeps it
        return None

    # ---- muting and idleness ----
    def mute(self, now_ms: int, throttle_ms: int) -> None:
        """A quota throttled an answer: admit nothing more for `throttle_ms` (Kafka's muted channel)."""
        self.muted_until_ms = max(self.muted_until_ms, now_ms + throttle_ms)

    def muted_for(self, now_ms: int) -> int:
        """How many ms the connection stays muted (0: it is not; the mute is then lifted)."""
        remaining = self.muted_until_ms - now_ms
        if remaining > 0:
            return remaining
        self.muted_until_ms = 0
        return 0

    def quiet_for(self, now: float) -> float:
        """How long nothing was received, owed or sent (0 while an answer is owed)."""
        return 0.0 if self._queue else now - self.last_activity

    def idle_expired(self, now: float, idle_s: float) -> bool:
        """Whether nothing was received, owed or sent for `idle_s` (connections.max.idle.ms); a connection
        still working on an answer counts as active now."""
        if self._queue:
            self.last_activity = now
            return False
        return now >= self.last_activity + idle_s
