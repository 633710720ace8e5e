"""Coverage-guided fuzzing (atheris, libFuzzer) of the framing and every request decoder.

`python -m compat_tests.fuzz.atheris_decoders -max_total_time=600` (any libFuzzer flag). Each input is fed to
a FrameBuffer in two pieces; every frame it yields is decoded: FrameError and DecodeError are the only
outcomes allowed besides a decoded request, anything else is a crash libFuzzer reports with its input.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from kemu.server.framing import FrameBuffer, FrameError
    from kemu.wire import codec

MAX_FRAME = 1 << 20


def one_input(data: bytes) -> None:
    frames = FrameBuffer(MAX_FRAME)
    split = data[0] % (len(data) + 1) if data else 0
    try:
        for piece in (data[:split], data[split:]):
            frames.feed(piece)
            while (frame := frames.next_frame()) is not None:
                try:
                    codec.decode_request(bytes(frame), allow_trailing=True)
                except codec.DecodeError:
                    pass
    except FrameError:
        pass


def main(argv: list[str]) -> None:
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
