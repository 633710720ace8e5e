"""Record batches (magic 2) as the corpus writes them: a `records` field is a list of batch dicts, so a Fetch
answer compares field by field (producer ids and timestamps normalised) instead of as one opaque blob.

A batch: base_offset, partition_leader_epoch, attributes, last_offset_delta, base_timestamp, max_timestamp,
producer_id, producer_epoch, base_sequence and records (attributes, timestamp_delta, offset_delta, key, value,
headers); batch_length and the CRC are computed when encoding (`corrupt_crc` sends a wrong one), and checked
when decoding (`crc_ok`). Keys and values are text when they are printable UTF-8, else `0x` and their hex. A
compressed batch keeps its records section as hex (`compressed_records`): the corpus produces none.
"""

from __future__ import annotations

import struct
from typing import Any

import crc32c

_HEAD = struct.Struct(">qiib")  # base offset, batch length, partition leader epoch, magic
_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. record count


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint(value: int) -> bytes:
    return uvarint((value << 1) ^ (value >> 63))


def _blob(value: str | None) -> bytes:
    if value is None:
        return _varint(-1)
    raw = bytes.fromhex(value[2:]) if value.startswith("0x") else value.encode("utf-8")
    return _varint(len(raw)) + raw


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + raw.hex()
    return text if text.isprintable() and not text.startswith("0x") else "0x" + raw.hex()


def _record(record: dict[str, Any]) -> bytes:
    body = (struct.pack(">b", record.get("attributes", 0)) + _varint(record.get("timestamp_delta", 0))
            + _varint(record.get("offset_delta", 0)) + _blob(record.get("key")) + _blob(record.get("value")))
    headers = record.get("headers", [])
    body += _varint(len(headers)) + b"".join(_blob(h["key"]) + _blob(h.get("value")) for h in headers)
    return _varint(len(body)) + body


def encode(batches: list[dict[str, Any]]) -> bytes:
    out = bytearray()
    for batch in batches:
        records = batch.get("records", [])
        after = _AFTER_CRC.pack(batch.get("attributes", 0), batch.get("last_offset_delta", len(records) - 1),
                                batch.get("base_timestamp", 0), batch.get("max_timestamp", 0),
                                batch.get("producer_id", -1), batch.get("producer_epoch", -1),
                                batch.get("base_sequence", -1), len(records))
        after += b"".join(_record(record) for record in records)
        crc = struct.pack(">I", crc32c.crc32c(after) ^ (1 if batch.get("corrupt_crc") else 0))
        length = 4 + 1 + len(crc) + len(after)  # leader epoch, magic, crc, the rest
        out += _HEAD.pack(batch.get("base_offset", 0), length, batch.get("partition_leader_epoch", -1), 2)
        out += crc + after
    return bytes(out)


class Cursor:
    """Reading bytes in order; a read past the end raises ValueError (protocol.py reads frames with it too)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, count: int) -> bytes:
        if count < 0 or self.at + count > len(self.data):
            raise ValueError(f"wanted {count} bytes at {self.at}, {len(self.data) - self.at} left")
        chunk = self.data[self.at:self.at + count]
        self.at += count
        return chunk

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def varint(self) -> int:
        raw = self.uvarint()
        return (raw >> 1) ^ -(raw & 1)

    def blob(self) -> bytes | None:
        size = self.varint()
        return None if size < 0 else self.take(size)


def _decode_records(data: bytes, count: int) -> list[dict[str, Any]]:
    cursor, records = Cursor(data), []
    for _ in range(count):
        cursor.varint()  # the record's length
        attributes = cursor.take(1)[0]
        record: dict[str, Any] = {"attributes": attributes, "timestamp_delta": cursor.varint(),
                                  "offset_delta": cursor.varint(), "key": _text(cursor.blob()),
                                  "value": _text(cursor.blob())}
        record["headers"] = [{"key": _text(cursor.blob()), "value": _text(cursor.blob())}
                             for _ in range(cursor.varint())]
        records.append(record)
    return records


def decode(data: bytes) -> list[dict[str, Any]] | dict[str, str]:
    """The batches of a records field; a field that is not whole magic-2 batches stays hex (`raw`), as does
    the tail of a Fetch answer cut at max_bytes (`partial`)."""
    batches: list[dict[str, Any]] = []
    at = 0
    while at < len(data):
        if len(data) - at < _HEAD.size:
            return {"batches_then_partial": batches, "partial": data[at:].hex()} if batches else {"raw": data.hex()}
        base_offset, length, leader_epoch, magic = _HEAD.unpack_from(data, at)
        end = at + 12 + length
        if magic != 2:
            return {"raw": data.hex()}
        if end > len(data):
            return {"batches_then_partial": batches, "partial": data[at:].hex()}
        (crc,) = struct.unpack_from(">I", data, at + _HEAD.size)
        after = data[at + _HEAD.size + 4:end]
        fields = _AFTER_CRC.unpack_from(after)
        attributes, last_delta, base_ts, max_ts, producer_id, producer_epoch, base_sequence, count = fields
        batch: dict[str, Any] = {
            "base_offset": base_offset, "partition_leader_epoch": leader_epoch, "attributes": attributes,
            "last_offset_delta": last_delta, "base_timestamp": base_ts, "max_timestamp": max_ts,
            "producer_id": producer_id, "producer_epoch": producer_epoch, "base_sequence": base_sequence,
            "crc_ok": crc32c.crc32c(after) == crc, "batch_length": length,
        }
        if attributes & 0x07:
            batch["compressed_records"] = after[_AFTER_CRC.size:].hex()
        else:
            try:
                batch["records"] = _decode_records(after[_AFTER_CRC.size:], count)
            except ValueError:
                batch["undecodable_records"] = after[_AFTER_CRC.size:].hex()
        batches.append(batch)
        at = end
    return batches
