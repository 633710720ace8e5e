"""UpdateFeatures (key 57): the checks and messages of Kafka's FeatureControlManager (as the reference Kafka
4.3 answered them), the levels and epoch ApiVersions then reports, kept across a restart, and
transaction.version's change reaching the transaction coordinator."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.wire.errors import ErrorCode
from tests.handlers.harness import Connection, MakeBroker, broker_config
from tests.handlers.test_transactions_v2 import api_versions

E = ErrorCode
KEY = 57
UPGRADE, SAFE, UNSAFE = 1, 2, 3
FAILED = "The update failed for all features since the following feature had an error: "


def update(conn: Connection, version: int, *updates: tuple[str, int, int], validate_only: bool = False,
           allow_downgrade: bool = False) -> dict[str, Any]:
    body = conn.request(KEY, version, {"timeout_ms": 30000, "validate_only": validate_only, "feature_updates": [
        {"feature": name, "max_version_level": level, "allow_downgrade": allow_downgrade, "upgrade_type": kind}
        for name, level, kind in updates]})
    body.pop("throttle_time_ms")
    return body


def finalized(conn: Connection) -> tuple[int, dict[str, int]]:
    body = api_versions(conn, 4)
    return body["finalized_features_epoch"], {f["name"]: f["max_version_level"] for f in body["finalized_features"]}


def refused(why: str) -> dict[str, Any]:
    return {"error_code": E.INVALID_UPDATE_VERSION, "error_message": FAILED + why, "results": []}


def test_transaction_version_down_and_up_again(conn: Connection) -> None:
    epoch, levels = finalized(conn)
    assert update(conn, 2, ("transaction.version", 1, UPGRADE)) == refused(
        "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature "
        "without setting the upgrade type to either safe or unsafe downgrade.")
    assert update(conn, 2, ("transaction.version", 1, SAFE)) == {"error_code": 0, "error_message": None,
                                                                  "results": []}
    assert finalized(conn) == (epoch + 1, {**levels, "transaction.version": 1})
    # v1 lists each feature; v0's allow_downgrade is not read: that downgrade is refused.
    assert update(conn, 1, ("transaction.version", 2, UPGRADE)) == {"error_code": 0, "error_message": None, "results": [
        {"feature": "transaction.version", "error_code": 0, "error_message": "NONE"}]}
    assert update(conn, 0, ("transaction.version", 1, UPGRADE), allow_downgrade=True)["error_code"] == (
        E.INVALID_UPDATE_VERSION)
    # Validate only: nothing changes. Level 0 (unsafe) removes the feature from the list.
    assert update(conn, 1, ("transaction.version", 1, SAFE), validate_only=True)["error_code"] == 0
    assert finalized(conn)[1]["transaction.version"] == 2
    assert update(conn, 2, ("transaction.version", 0, UNSAFE))["error_code"] == 0
    assert "transaction.version" not in finalized(conn)[1]


@pytest.mark.parametrize(("updates", "why"), [
    ([("transaction.version", 3, UPGRADE)], "Invalid update version 3 for feature transaction.version. "
                                            "Local controller 1 only supports versions 0-2"),
    ([("transaction.version", -1, UNSAFE)], "Invalid update version -1 for feature transaction.version. "
                                            "A feature version cannot be less than 0."),
    ([("foo.version", 1, UPGRADE)], "Invalid update version 1 for feature foo.version. "
                                    "Local controller 1 does not support this feature."),
    ([("transaction.version", 2, 7)], "Invalid update version 2 for feature transaction.version. "
                                      "The controller does not support the given upgrade type."),
    ([("transaction.version", 2, SAFE), ("transaction.version", 3, SAFE)],
     "Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2"),
    ([("metadata.version", 29, SAFE)], "Unsupported metadata.version downgrade from 30 to 29. Refusing to "
                                       "perform the requested downgrade because it might delete metadata information."),
    ([("metadata.version", 29, UNSAFE)], "Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata "
                                         "downgrade is not supported in this version."),
    ([("transaction.version", 1, SAFE), ("foo.version", 1, UPGRADE)],
     "Invalid update version 1 for feature foo.version. Local controller 1 does not support this feature."),
    # kemu's own: the protocols it always serves.
    ([("group.version", 0, SAFE)], "Invalid update version 0 for feature group.version. "
                                   "kemu serves group.version at level 1 only."),
    ([("share.version", 0, SAFE)], "Invalid update version 0 for feature share.version. "
                                   "kemu serves share.version at level 1 only."),
    ([("streams.version", 0, SAFE)], "Invalid update version 0 for feature streams.version. "
                                     "kemu serves streams.version at level 1 only."),
])
def test_refused_updates_change_nothing(conn: Connection, updates: list[tuple[str, int, int]], why: str) -> None:
    before = finalized(conn)
    assert update(conn, 2, *updates) == refused(why)
    assert finalized(conn) == before


def test_updates_that_change_no_level(conn: Connection) -> None:
    epoch, levels = finalized(conn)
    # Kafka writes the record all the same (the epoch moves), but for kraft.version left as it is.
    assert update(conn, 2, ("metadata.version", 30, UPGRADE))["error_code"] == 0
    assert update(conn, 2, ("kraft.version", 0, SAFE))["error_code"] == 0
    assert update(conn, 2)["error_code"] == 0
    assert finalized(conn) == (epoch + 1, levels)
    assert update(conn, 2, ("kraft.version", 1, UPGRADE))["error_code"] == 0
    assert finalized(conn) == (epoch + 2, {**levels, "kraft.version": 1})
    assert update(conn, 2, ("kraft.version", 0, SAFE)) == refused(
        "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature.")


def test_the_levels_survive_a_restart_and_the_coordinator_follows(make_broker: MakeBroker, tmp_path: Any) -> None:
    config = broker_config(data_dir=str(tmp_path))
    with make_broker(config) as broker, broker.connect() as conn:
        conn.request(22, 4, {"transactional_id": "t", "transaction_timeout_ms": 60000, "producer_id": -1,
                             "producer_epoch": -1})  # the transaction coordinator is up
        assert update(conn, 2, ("transaction.version", 0, SAFE))["error_code"] == 0
        assert broker.call(lambda: broker.coordinators.txn.coordinator.config.transaction_version) == 0
        epoch, levels = finalized(conn)
    with make_broker(broker_config(data_dir=str(tmp_path))) as broker, broker.connect() as conn:
        assert finalized(conn) == (epoch, levels) and "transaction.version" not in levels
        assert broker.call(lambda: broker.coordinators.txn.coordinator.config.transaction_version) == 0
    # `kemu.features`, given, sets the level again.
    again = broker_config(data_dir=str(tmp_path), properties={"kemu.features": "transaction.version=2"})
    with make_broker(again) as broker, broker.connect() as conn:
        assert finalized(conn) == (epoch + 1, {**levels, "transaction.version": 2})
