"""kemu.server.request_order driven by plain calls, as a connection (or the in-process harness) drives it:
requests admitted, answers finished in any order, what to write asked for."""

from __future__ import annotations

from pathlib import Path

from kemu.server.request_order import RequestOrder, Slot
from kemu.wire.buffers import joined
from kemu.wire.file_region import FileRegion, SharedFile


def order(max_pending: int = 32, max_buffered: int = 1 << 20) -> RequestOrder:
    return RequestOrder(max_pending, max_buffered)


def written(requests: RequestOrder) -> list[bytes | None]:
    """Write everything that may be written now, as the connection's drain does; None marks a close."""
    out: list[bytes | None] = []
    while (slot := requests.next_to_send()) is not None:
        if slot.payload is not None:
            out.append(joined(slot.payload))
        if requests.sent(slot):
            out.append(None)
    return out


def test_answers_finished_out_of_order_are_written_in_request_order() -> None:
    requests = order()
    first, second, third = requests.admit(), requests.admit(), requests.admit()
    requests.finish(third, [b"3"])
    requests.finish(second, [b"2a", b"2b"])
    assert written(requests) == []  # the first is still being worked on: nothing may overtake it
    assert requests.owed == 3 and requests.buffered == 5
    requests.finish(first, [b"1"])
    assert written(requests) == [b"1", b"2a2b", b"3"]
    assert requests.owed == 0 and requests.buffered == 0


def test_a_request_without_an_answer_keeps_its_place() -> None:
    requests = order()
    produce, metadata = requests.admit(), requests.admit()
    requests.finish(metadata, [b"metadata"])
    assert written(requests) == []
    requests.finish(produce, None)  # acks=0: nothing is written, but it was in front
    assert written(requests) == [b"metadata"]
    assert requests.owed == 0


def test_answers_before_a_close_go_out_and_nothing_after_it() -> None:
    requests = order()
    before, fatal, after = requests.admit(), requests.admit(), requests.admit()
    requests.finish(after, [b"late"])
    requests.finish(fatal, None, close=True)
    assert requests.close_answered
    assert written(requests) == []
    requests.finish(before, [b"early"])
    assert written(requests) == [b"early", None]
    assert requests.closing
    assert requests.next_to_send() is None  # `after` is never written
    assert requests.owed == 1


def test_an_answer_that_closes_is_written_before_the_close() -> None:
    requests = order()
    slot = requests.answered([b"bye"], close=True, close_delay_s=0.5)
    assert slot.close_delay_s == 0.5
    assert written(requests) == [b"bye", None]


def test_an_immediate_answer_waits_behind_earlier_requests() -> None:
    requests = order()
    running = requests.admit()
    requests.answered([b"api-versions"])  # needed no handler, yet came second
    requests.answered(None, close=True)  # a refused frame
    assert written(requests) == []
    requests.finish(running, [b"first"])
    assert written(requests) == [b"first", b"api-versions", None]


def test_an_abandoned_request_holds_nothing_back() -> None:
    requests = order()
    failed, next_one = requests.admit(), requests.admit()
    requests.finish(next_one, [b"next"])
    requests.abandon(failed)
    assert written(requests) == [b"next"]


def test_full_on_too_many_owed_or_too_many_bytes_waiting() -> None:
    requests = order(max_pending=2, max_buffered=10)
    first = requests.admit()
    assert not requests.full()
    second = requests.admit()
    assert requests.full()  # two owed
    requests.finish(first, [b"x" * 11])
    assert written(requests) == [b"x" * 11]
    assert not requests.full()
    requests.finish(second, [b"y" * 11])  # finished but unsent bytes past the bound
    assert requests.full()
    written(requests)
    assert not requests.full() and requests.buffered == 0


def test_the_turn_passes_in_arrival_order() -> None:
    requests = order()
    assert requests.turn_free
    a, b, c = Slot(), Slot(), Slot()
    assert requests.take_turn(a)  # nobody held it
    assert not requests.take_turn(b)
    assert not requests.take_turn(c)
    assert not requests.turn_free
    assert requests.end_turn(a) is b
    assert requests.end_turn(a) is None  # a second detach changes nothing
    assert requests.end_turn(b) is c
    assert requests.end_turn(c) is None
    assert requests.turn_free


def test_a_request_cancelled_before_its_turn_leaves_the_holder_its_turn() -> None:
    requests = order()
    a, b, c = Slot(), Slot(), Slot()
    requests.take_turn(a)
    requests.take_turn(b)
    requests.take_turn(c)
    assert requests.end_turn(b) is None
    assert requests.end_turn(a) is c


def test_a_throttle_mutes_until_the_clock_reaches_its_end() -> None:
    requests = order()
    assert requests.muted_for(1_000) == 0
    requests.mute(1_000, 300)
    requests.mute(1_100, 100)  # a shorter one ends inside the longer
    assert requests.muted_for(1_000) == 300
    assert requests.muted_for(1_250) == 50
    assert requests.muted_for(1_300) == 0
    assert requests.muted_until_ms == 0


def test_idle_counts_from_the_last_activity_and_not_while_an_answer_is_owed() -> None:
    requests = RequestOrder(32, 1 << 20, now=10.0)
    assert requests.quiet_for(12.0) == 2.0
    assert not requests.idle_expired(14.0, 5.0)
    slot = requests.admit()
    assert requests.quiet_for(30.0) == 0.0
    assert not requests.idle_expired(30.0, 5.0)  # working on an answer: active now
    requests.finish(slot, [b"r"])
    written(requests)
    assert not requests.idle_expired(34.0, 5.0)
    assert requests.idle_expired(35.0, 5.0)


def test_the_broker_counts_what_every_connection_owes_until_sent_or_gone() -> None:
    from kemu.broker.owed_answers import OwedAnswers

    owed = OwedAnswers(limit=100)
    one, two = RequestOrder(32, 1 << 20, owed=owed), RequestOrder(32, 1 << 20, owed=owed)
    first, second = one.admit(), one.admit()
    other = two.admit()
    one.finish(first, [b"abc"])
    one.finish(second, [b"de"])
    two.finish(other, [b"x" * 10])
    assert owed.used == 15 and owed.left() == 85
    assert written(one) == [b"abc", b"de"]
    assert owed.used == 10
    two.admit()
    two.release()  # the connection closed with an answer unsent
    assert owed.used == 0 and two.buffered == 0
    two.release()
    assert owed.used == 0


def test_a_region_of_a_file_counts_as_owed_or_buffered_memory_only_its_memory_parts(tmp_path: Path) -> None:
    from kemu.broker.owed_answers import OwedAnswers

    (tmp_path / "segment").write_bytes(b"r" * 5000)
    region = FileRegion(SharedFile.open(tmp_path / "segment"), 0, 5000)
    owed = OwedAnswers(limit=100)
    requests = RequestOrder(32, 10, owed=owed)
    slot = requests.admit()
    requests.finish(slot, [b"head", region, b"tail"])
    assert slot.size == 5008  # what the frame's size says
    assert (requests.buffered, owed.used) == (8, 8)
    assert not requests.full()  # a region holds no memory: nothing for a slow reader to hold up
    assert requests.next_to_send() is slot and not requests.sent(slot)
    assert (requests.buffered, owed.used) == (0, 0)
