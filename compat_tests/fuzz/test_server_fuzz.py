"""CI's bounded run of the running-server fuzzer (KEMU_FUZZ_FRAMES, default 20,000 frames, half of them built
from Kafka's message specs): the broker answers or closes, never dies, stays live, keeps the canary records
whole and prints no traceback."""

from __future__ import annotations

import os

from compat_tests.fuzz.session import count_tracebacks, fuzz_session, tracebacks_of

FRAMES = int(os.environ.get("KEMU_FUZZ_FRAMES", "20000"))
# The figure is 1 s; CI shares two cores with other jobs, so the bounded run allows more, and
# prints the slowest check it saw.
DEADLINE_S = float(os.environ.get("KEMU_FUZZ_DEADLINE_S", "5"))


def test_twenty_thousand_fuzzed_frames_leave_the_broker_serving() -> None:
    stats, corpus, rss, output = fuzz_session(FRAMES, seed=int(os.environ.get("KEMU_FUZZ_SEED", "16")),
                                              deadline_s=DEADLINE_S)
    print(f"corpus {corpus} client requests; {stats.line()}; broker resident memory {rss // 1024} MiB")
    assert corpus > 50
    assert stats.sent == FRAMES
    assert stats.checks >= FRAMES // 1000
    assert stats.answered > FRAMES // 10  # the replayed and surviving requests are answered, not dropped
    assert stats.closed > 0  # and the broken ones close their connection
    assert stats.structured > FRAMES // 3  # the spec-built frames are among them
    assert stats.tracebacks == 0, tracebacks_of(output)


def test_a_chained_traceback_counts_once_and_a_second_failure_again() -> None:
    one = ("ERROR closing connection\nTraceback (most recent call last):\n  File x\nValueError: a\n\n"
           "During handling of the above exception, another exception occurred:\n\n"
           "Traceback (most recent call last):\n  File y\nKeyError: b\n")
    assert count_tracebacks("") == 0
    assert count_tracebacks(one) == 1
    assert count_tracebacks(one + "WARNING later\n" + one) == 2
