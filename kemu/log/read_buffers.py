"""Reusable buffers for the big reads of segment bytes a Fetch sends.

A fresh 1 MiB `bytes` per partition per Fetch is memory the kernel must map and zero before `pread` copies
into it, and which goes back to it once the answer is sent: on an 8-partition Fetch of 1 MiB each, the
page faults and zeroing were a quarter of the broker's time (perf), as much as the copies themselves.
Buffers here are kept and read into again. A buffer is handed out as a view, and is free again once no
view of it is alive: a `bytearray` refuses to resize while it is exported, which is the test, so whoever
holds the bytes (a response not yet sent, a batch a cleaner keeps) decides how long, and nothing is ever
overwritten under a reader.

The pool is one per process and takes no lock: a buffer is popped off its list (one step under the GIL),
looked at, and put back, so no two threads can take the same free buffer. It holds at most
`KEEP_BYTES`; past that a read gets a buffer of its own, freed with it as before.
"""

from __future__ import annotations

import os

from kemu.wire.buffers import is_exported

# Below this a read costs too little to be worth a buffer: small allocations come from memory Python
# already has, without page faults.
POOLED_MIN_BYTES = 64 * 1024
# What the pool may keep, over all sizes: eight partitions' worth of `max.partition.fetch.bytes` (1 MiB)
# twice over, so two consumers' full Fetches are served from kept memory.
KEEP_BYTES = 16 * 1024 * 1024

_pools: dict[int, list[bytearray]] = {}
_kept = [0]


def pread(fd: int, size: int, position: int) -> bytes | memoryview:
    """`os.pread(fd, size, position)`, into a kept buffer when `size` is big enough to be worth it."""
    if size < POOLED_MIN_BYTES:
        return os.pread(fd, size, position)
    view = take(size)
    count = os.preadv(fd, [view], position)
    return view if count == size else view[:count]


def joined(parts: list[memoryview]) -> bytes | memoryview:
    """The `parts` as one buffer, a kept one when they are big enough for it to be worth it."""
    size = sum(len(part) for part in parts)
    if size < POOLED_MIN_BYTES:
        return b"".join(parts)
    view = take(size)
    at = 0
    for part in parts:
        view[at:at + len(part)] = part
        at += len(part)
    return view


def take(size: int) -> memoryview:
    """A writable view of exactly `size` bytes of a buffer no one else holds a view of."""
    capacity = _capacity(size)
    pool = _pools.setdefault(capacity, [])
    for _ in range(len(pool)):
        try:
            buffer = pool.pop()
        except IndexError:  # another thread emptied it meanwhile
            break
        if is_exported(buffer):
            pool.insert(0, buffer)  # still held: looked at again after the others
            continue
        view = memoryview(buffer)[:size]
        pool.insert(0, buffer)  # exported now, so skipped until this view and its slices are gone
        return view
    buffer = bytearray(capacity)
    view = memoryview(buffer)[:size]  # exported before another thread can find it in the pool
    if _kept[0] + capacity <= KEEP_BYTES:
        _kept[0] += capacity
        pool.insert(0, buffer)
    return view


def kept_bytes() -> int:
    """What the pool holds now, whether handed out or free."""
    return _kept[0]


def _capacity(size: int) -> int:
    # Powers of two from 64 KiB: a read finds a buffer of its class, and a slightly bigger read than the
    # last (one batch more) does not need a new one.
    return max(POOLED_MIN_BYTES, 1 << (size - 1).bit_length())
