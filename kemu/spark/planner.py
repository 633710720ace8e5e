"""The driver's side of a read: which partitions exist and what their offsets are, asked through the admin
client. With read_committed (the default) "latest" is the last stable offset, so a batch never ends inside a
transaction that is still open."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import IsolationLevel
from confluent_kafka import TopicPartition as ClientPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]  # not in its __all__

from kemu.spark.offsets import EARLIEST, LATEST, Offsets, Selection, Spec, TopicPartition
from kemu.spark.options import consumer_config, number, option

REQUEST_TIMEOUT_S = 30.0


def _earliest() -> OffsetSpec:
    return OffsetSpec.earliest()  # type: ignore[no-untyped-call,no-any-return]  # unannotated


def _latest() -> OffsetSpec:
    return OffsetSpec.latest()  # type: ignore[no-untyped-call,no-any-return]


class OffsetPlanner:
    """Lazily opens its admin client, and drops it when pickled: Spark ships readers to other processes."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._config = consumer_config(options)
        self._timeout_s = (number(options, "kafkaConsumer.pollTimeoutMs") or int(REQUEST_TIMEOUT_S * 1000)) / 1000
        self._by_timestamp_strategy = (option(options, "startingOffsetsByTimestampStrategy") or "error").lower()
        if self._by_timestamp_strategy not in ("error", "latest"):
            raise ValueError("startingOffsetsByTimestampStrategy must be 'error' or 'latest'")
        self._admin: AdminClient | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_admin": None}

    @property
    def read_committed(self) -> bool:
        return self._config.get("isolation.level", "read_committed") == "read_committed"

    def _client(self) -> AdminClient:
        if self._admin is None:
            admin_settings: dict[str, str | int | float | bool] = {
                k: v for k, v in self._config.items() if k != "isolation.level"}
            self._admin = AdminClient(admin_settings)
        return self._admin

    def partitions(self, selection: Selection) -> list[TopicPartition]:
        metadata = self._client().list_topics(timeout=self._timeout_s)
        available = {name: len(topic.partitions) for name, topic in metadata.topics.items() if topic.error is None}
        return selection.choose(available)

    def _list(self, specs: Mapping[TopicPartition, OffsetSpec]) -> dict[TopicPartition, int]:
        if not specs:
            return {}
        isolation = IsolationLevel.READ_COMMITTED if self.read_committed else IsolationLevel.READ_UNCOMMITTED
        futures = self._client().list_offsets({ClientPartition(t, p): spec for (t, p), spec in specs.items()},
                                              isolation_level=isolation, request_timeout=self._timeout_s)
        return {(tp.topic, tp.partition): int(future.result(self._timeout_s).offset)
                for tp, future in futures.items()}

    def earliest(self, tps: Iterable[TopicPartition]) -> Offsets:
        return self._list({tp: _earliest() for tp in tps})

    def latest(self, tps: Iterable[TopicPartition]) -> Offsets:
        """The last stable offset under read_committed, else the high watermark."""
        return self._list({tp: _latest() for tp in tps})

    def resolve(self, spec: Spec, tps: list[TopicPartition], *, ending: bool = False) -> Offsets:
        """The concrete offsets `spec` names for `tps`. A timestamp no record reaches gives the latest offset
        for an end, and for a start what startingOffsetsByTimestampStrategy says (Spark's default: an error)."""
        if spec.kind == "earliest":
            return self.earliest(tps)
        if spec.kind == "latest":
            return self.latest(tps)
        if spec.kind == "offsets":
            missing = sorted(set(tps) - set(spec.offsets))
            if missing:
                raise ValueError(f"specific offsets must name every partition read; missing {missing}")
            earliest = self.earliest(tp for tp in tps if spec.offsets[tp] == EARLIEST)
            latest = self.latest(tp for tp in tps if spec.offsets[tp] == LATEST)
            return {tp: earliest.get(tp, latest.get(tp, spec.offsets[tp])) for tp in tps}
        stamps = {tp: spec.every_timestamp if spec.every_timestamp is not None else spec.timestamps.get(tp)
                  for tp in tps}
        unnamed = sorted(tp for tp, stamp in stamps.items() if stamp is None)
        if unnamed:
            raise ValueError(f"offsets by timestamp must name every partition read; missing {unnamed}")
        found = self._list({tp: OffsetSpec.for_timestamp(int(stamp)) for tp, stamp in stamps.items()
                            if stamp is not None})
        # Kafka answers -1 where no record has a timestamp at or after the one asked for.
        none = [tp for tp, offset in found.items() if offset < 0]
        if none and not ending and self._by_timestamp_strategy == "error":
            raise ValueError(f"no offset matched the timestamp for {sorted(none)}; set "
                             "startingOffsetsByTimestampStrategy=latest to start those at the latest offset")
        latest = self.latest(none)
        return {tp: latest.get(tp, offset) for tp, offset in found.items()}
