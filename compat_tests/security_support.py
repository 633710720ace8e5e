"""What the security compat tests share: a broker with TLS and SASL listeners (kemu.testing.certs), the
principals it saw, and each client's settings for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.server.hooks import Exchange
from kemu.testing import Broker
from kemu.testing.certs import TestCertificates, sasl_settings

USERS = {"alice": "alice-secret"}
JAAS_PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'


class SecuredBroker:
    """One broker with a listener of each kind: PLAINTEXT, SSL (client certificate required), SASL_SSL and
    SASL_PLAINTEXT, the SASL ones offering PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER for `USERS`."""

    def __init__(self, directory: Path) -> None:
        self.certs = TestCertificates.create(directory)
        config = {
            "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,"
                         "SASL_PLAINTEXT://127.0.0.1:0",
            "inter.broker.listener.name": "PLAINTEXT",
            **self.certs.tls_settings(),
            "listener.name.ssl.ssl.client.auth": "required",
            # SCRAM credentials are the broker's, not a listener's: the second holds every mechanism's.
            **sasl_settings("sasl_plaintext", ("PLAIN", "SCRAM-SHA-512"), USERS),
            **sasl_settings("sasl_ssl", ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"), USERS),
        }
        self.broker = Broker(config=config)
        self.principals: list[tuple[str, str]] = []  # (listener, principal) of every request served
        self.broker.hooks.observe(self._observe)

    def _observe(self, exchange: Exchange) -> None:
        client = exchange.ctx.client
        self.principals.append((client.listener_name, client.principal))

    def seen(self, listener: str) -> set[str]:
        return {principal for name, principal in list(self.principals) if name == listener}

    def bootstrap(self, listener: str) -> str:
        return self.broker.bootstrap(listener)

    def close(self) -> None:
        self.broker.close()


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    broker = SecuredBroker(tmp_path_factory.mktemp("kemu-certs"))
    try:
        yield broker
    finally:
        broker.close()
