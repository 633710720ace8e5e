"""CI's bounded run of the running-server fuzzer (KEMU_FUZZ_FRAMES, default 20,000 frames): the broker
answers or closes, never dies, stays live and keeps the canary records whole."""

from __future__ import annotations

import os

from compat_tests.fuzz.session import fuzz_session

FRAMES = int(os.environ.get("KEMU_FUZZ_FRAMES", "20000"))
# The figure is 1 s; CI shares two cores with other jobs, so the bounded run allows more, and
# prints the slowest check it saw.
DEADLINE_S = float(os.environ.get("KEMU_FUZZ_DEADLINE_S", "5"))


def test_twenty_thousand_fuzzed_frames_leave_the_broker_serving() -> None:
    stats, corpus, rss = fuzz_session(FRAMES, seed=int(os.environ.get("KEMU_FUZZ_SEED", "16")),
                                      deadline_s=DEADLINE_S)
    print(f"corpus {corpus} client requests; {stats.line()}; broker resident memory {rss // 1024} MiB")
    assert corpus > 50
    assert stats.sent == FRAMES
    assert stats.checks >= FRAMES // 1000
    assert stats.answered > FRAMES // 10  # the replayed and surviving requests are answered, not dropped
    assert stats.closed > 0  # and the broken ones close their connection
