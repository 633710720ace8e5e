"""The wire declarations load one API at a time (`get_api`), and `VERSIONS`, which lets the broker advertise
every API without importing its declaration, says what each declaration says."""

from __future__ import annotations

import pytest

from kemu.wire import apis


def test_versions_hold_every_declaration_and_its_range() -> None:
    declared = apis.all_apis()
    assert sorted(declared) == sorted(apis.declaration_modules()) == sorted(apis.VERSIONS), (
        "a new API declaration needs its row in kemu.wire.apis.VERSIONS")
    for key, api in declared.items():
        assert api.key == key
        assert apis.VERSIONS[key] == (api.min_version, api.max_version), api.name


def test_an_unknown_key_has_no_declaration() -> None:
    assert apis.get_api(4) is None  # LeaderAndIsr: a controller-to-broker API kemu does not speak
    assert apis.get_api(1000) is None


def test_a_declaration_whose_range_disagrees_with_the_table_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apis, "VERSIONS", {**apis.VERSIONS, 3: (0, 14)})
    monkeypatch.setattr(apis, "_loaded", {})
    with pytest.raises(RuntimeError, match=r"k03_metadata declares versions 0-13; .* says \(0, 14\)"):
        apis.get_api(3)
