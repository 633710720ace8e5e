"""Settings that used to do nothing now do something or say so: suite-wide broker settings from the ini key
`kemu_config` and `--kemu-config`, a marker on a test that uses the shared session broker, and a misspelt
setting (pytester, as a user's suite runs the plugin)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CHECK_PARTITIONS = """
    import pytest

    def test_fixture(kemu_broker):
        assert kemu_broker.core.config.num_partitions == {expected}

    def test_session(kemu_broker_session):
        assert kemu_broker_session.core.config.num_partitions == {expected}

    def test_factory(kemu_broker_factory):
        assert kemu_broker_factory().core.config.num_partitions == {expected}

    @pytest.mark.kemu(config={{"num.partitions": "9"}})
    def test_own_setting_wins(kemu_broker):
        assert kemu_broker.core.config.num_partitions == 9
"""


def test_the_ini_key_sets_every_fixtures_broker(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkemu_config =\n    num.partitions=4\n    log.retention.ms=60000\n")
    pytester.makepyfile(CHECK_PARTITIONS.format(expected=4))
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=4)


def test_the_option_wins_over_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkemu_config = num.partitions=4\n")
    pytester.makepyfile(CHECK_PARTITIONS.format(expected=5))
    pytester.runpytest("-p", "no:randomly", "--kemu-config", "num.partitions=5").assert_outcomes(passed=4)


def test_a_malformed_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(kemu_broker):\n    pass\n")
    result = pytester.runpytest("--kemu-config", "num.partitions")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--kemu-config takes NAME=VALUE, got 'num.partitions'*"])


def test_a_marker_on_a_session_broker_test_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.kemu(config={"num.partitions": "3"})
        def test_marked(kemu_broker_session):
            pass
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.kemu sets up kemu_broker, not the shared kemu_broker_session*"])


def test_a_misspelt_setting_is_warned_about(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest
        from kemu.testing import UnknownConfigWarning

        @pytest.mark.kemu(config={"num.partition": "3"})
        def test_marked(kemu_broker):
            pass

        def test_factory(kemu_broker_factory):
            with pytest.warns(UnknownConfigWarning, match="The configuration 'log.retention.mss' was supplied"):
                kemu_broker_factory(config={"log.retention.mss": "1"})
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*UnknownConfigWarning: The configuration 'num.partition' was supplied but isn't a "
                                 "known config.*"])
