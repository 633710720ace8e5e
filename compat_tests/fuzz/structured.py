"""The fuzzer's structure-aware mode: requests built from Kafka 4.3's own message specs (through the
conformance corpus's encoder, compat_tests/conformance/protocol.py, which owes nothing to kemu's declarations),
for every API key the specs name and every version (and some past either end), flexible and not: each field
given a value its type allows but a client would rarely send (extremes, nulls, empty and long strings, arrays of
none or many, tagged fields present or not and tags no spec names), and in some frames one length or count
prefix that lies (one off, null where none may be, negative, huge) or a tagged field whose size lies.

Every frame is well formed up to what was mutated, so the decoders, the handlers and the encoders of the
answers are all reached, not only the framing.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from compat_tests.conformance import protocol
from compat_tests.fuzz.server_fuzzer import KEPT_OUT

# Besides the server fuzzer's destructive keys: AlterClientQuotas (a random default quota would throttle the
# liveness checks' own connections) and UnregisterBroker (a one-broker kemu taken out of its own cluster).
STRUCTURED_KEPT_OUT = KEPT_OUT | {49, 64}
_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UNSIGNED = {"uint16": 16, "uint32": 32}
_LIES = ("one more", "one fewer", "null", "negative", "huge", "zero")


def _extreme(bits: int, signed: bool, rng: random.Random) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return rng.choice([0, 1, high, low, -1 if signed else high - 1, rng.randint(low, high), rng.randint(0, 16)])


class StructuredFrames:
    """Request frames (without their size prefix) from the specs; `next()` one at a time, reproducible by seed."""

    def __init__(self, rng: random.Random, max_elements: int = 3) -> None:
        self.rng = rng
        self.max_elements = max_elements
        from kemu.handlers import all_handlers

        specified = {key for key in protocol.api_names() if key not in STRUCTURED_KEPT_OUT
                     and protocol.request_spec(key).valid.low <= protocol.request_spec(key).valid.high}
        # Mostly the keys kemu serves (their answers are where the encoders are reached); the rest of the specs'
        # keys (controller, inter-broker, removed) now and then, which a broker refuses before decoding.
        self.served = sorted(specified & set(all_handlers()))
        self.others = sorted(specified - set(self.served))
        self.correlation = 0

    def next(self) -> bytes:
        rng = self.rng
        key = rng.choice(self.others if self.others and rng.random() < 0.1 else self.served)
        spec = protocol.request_spec(key)
        high = min(spec.valid.high, 127)
        version = rng.randint(spec.valid.low, high) if rng.random() < 0.95 else rng.choice(
            [spec.valid.low - 1, high + 1, 127, -1])
        body_version = protocol.clamp(spec, version)
        body = self.body(spec.fields, body_version, body_version in spec.flexible, 0)
        self.correlation += 1
        client_id = rng.choice([None, "", "fuzz", "x" * rng.randint(1, 300)])
        lengths = self._lying_lengths() if rng.random() < 0.3 else protocol.true_length
        return protocol.encode_request(key, version, self.correlation, client_id, body, lengths)

    # --- values ------------------------------------------------------------------------------------------

    def body(self, fields: tuple[protocol.Field, ...], version: int, flexible: bool, depth: int) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        for field in fields:
            if version not in field.versions:
                continue
            if field.tag is not None and version in field.tagged and rng.random() < 0.5:
                continue  # a tagged field left out, as most clients send them
            out[field.name] = self.value(field, field.type, version, flexible, depth)
        if flexible and rng.random() < 0.05:
            out["_unknown_tags"] = {str(rng.randint(0, 2**16)): rng.randbytes(rng.randint(0, 8)).hex()}
        return out

    def value(self, field: protocol.Field, kind: str, version: int, flexible: bool, depth: int) -> Any:
        rng = self.rng
        nullable = version in field.nullable and kind == field.type
        if nullable and rng.random() < 0.15:
            return None
        if kind.startswith("[]"):
            count = 0 if depth > 3 else rng.choice([0, 1, 1, 2, rng.randint(0, self.max_elements)])
            if depth <= 1 and rng.random() < 0.02:
                count = rng.randint(50, 400)  # many elements: the counting budget and big answers
            return [self.value(field, kind[2:], version, flexible, depth + 1) for _ in range(count)]
        if field.fields and kind not in _INTS and kind not in _UNSIGNED:
            return self.body(field.fields, version, flexible, depth + 1)
        if kind in _INTS:
            return _extreme(_INTS[kind], True, rng)
        if kind in _UNSIGNED:
            return _extreme(_UNSIGNED[kind], False, rng)
        if kind == "float64":
            return rng.choice([0.0, -1.0, 1e308, float("nan"), float("inf"), rng.random()])
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "uuid":
            raw = rng.choice([bytes(16), rng.randbytes(16), b"\xff" * 16])
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if kind == "string":
            return self.text(flexible)
        if kind == "records":
            return self.records()
        return rng.randbytes(rng.choice([0, 1, 8, rng.randint(0, 600)])).hex()

    def text(self, flexible: bool) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            return ""
        if roll < 0.6:
            return f"fuzz-{rng.randint(0, 40)}"
        if roll < 0.75:
            return rng.choice(["__consumer_offsets", "__transaction_state", "..", ".", "a/b", "é" * 10,
                               "\x00", "*", "User:*", "fuzz-canary"])
        # Long names: past 249 (topics), 32767 (a string Kafka's records can hold) where the version lets.
        return "n" * rng.choice([250, 1000, 32767, 33000 if flexible else 32767])

    def records(self) -> list[dict[str, Any]]:
        rng = self.rng
        records = [{"attributes": 0, "timestamp_delta": rng.choice([0, -1, 2**31]), "offset_delta": index,
                    "key": rng.choice([None, "k"]), "value": rng.choice([None, "", "v" * rng.randint(1, 64)]),
                    "headers": []} for index in range(rng.randint(0, 3))]
        return [{"attributes": rng.choice([0, 0, 1, 2, 3, 4, 0x10, 0x20, 0x30, 7, 0xff]),
                 "producer_id": rng.choice([-1, -1, 0, 2**40]), "producer_epoch": rng.choice([-1, 0, 32767]),
                 "base_sequence": rng.choice([-1, 0, 2**31 - 1]), "base_timestamp": rng.choice([0, -1, 2**62]),
                 "max_timestamp": 0, "partition_leader_epoch": -1, "records": records,
                 "corrupt_crc": rng.random() < 0.1}]

    # --- lies ----------------------------------------------------------------------------------------------

    def _lying_lengths(self) -> protocol.Lengths:
        """A prefix writer that tells the truth but once: at a prefix chosen at random among the frame's."""
        rng = self.rng
        lie = rng.choice(_LIES)
        at = rng.randint(0, 12)
        seen = [0]

        def lengths(kind: str, length: int) -> int:
            seen[0] += 1
            if seen[0] - 1 != at:
                return length
            return {"one more": length + 1, "one fewer": length - 1, "null": -1, "negative": -rng.randint(2, 9),
                    "huge": rng.choice([2**31 - 1, 2**20, 32767]), "zero": 0}[lie]

        return lengths
