"""`kemu serve --override` refuses a listener or security setting Kafka refuses, with Kafka's message, before
anything starts."""

from __future__ import annotations

import pytest

from kemu.cli import main


@pytest.mark.parametrize(("override", "message"), [
    ("listeners=TRACE://:9092", "No security protocol defined for listener TRACE"),
    ("listener.security.protocol.map=PLAINTEXT:TLS", "Invalid security protocol `TLS`"),
    ("kemu.scram.credentials=SCRAM-SHA-1=[name=a,password=b]", "Invalid SCRAM credential"),
])
def test_refused_at_start_up(override: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--override", override]) == 2
    assert message in capsys.readouterr().err


def test_a_sasl_listener_needs_its_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--override", "listeners=SASL_PLAINTEXT://127.0.0.1:0",
                 "--override", "inter.broker.listener.name=SASL_PLAINTEXT"]) == 2
    assert "kemu does not support SASL mechanism GSSAPI" in capsys.readouterr().err
