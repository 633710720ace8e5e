"""The Runner JVM the Java tests share (src/Runner.java through java_client.JavaClient): it runs the line's own
kafka-clients, a request it cannot run is the caller's failure rather than a client outcome, an exception the
client threw comes back as a JavaError naming its class, and the same JVM answers the next request after both."""

from __future__ import annotations

import pytest

from compat_tests.external_clients import ToolFailed
from compat_tests.java.conftest import BOTH_LINES
from compat_tests.java.java_client import JavaClient, JavaError

CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException"


@BOTH_LINES
def test_the_runner_answers_usage_and_client_errors_and_keeps_going(java: JavaClient) -> None:
    assert java.version is not None and java.version.startswith(f"{java.line}.")
    starts = java.starts
    with pytest.raises(ToolFailed, match="programs"):
        java.run("NoSuchProgram", "127.0.0.1:1", "cluster")
    with pytest.raises(ToolFailed, match="<topic> <perPartition> <compression>"):
        java.run("Transactions", "127.0.0.1:1", "idempotent")
    # The producer's constructor rejects the codec before it reaches for any broker.
    with pytest.raises(JavaError) as thrown:
        java.run("Transactions", "127.0.0.1:1", "idempotent", "topic", "1", "no-such-codec")
    assert thrown.value.java_class == CONFIG_EXCEPTION
    assert "no-such-codec" in str(thrown.value.error["message"])
    assert java.starts == starts
