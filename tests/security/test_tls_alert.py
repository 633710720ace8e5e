"""A client certificate the trust store refuses ends the handshake with the TLS alert that says why, as Kafka's
SslTransportLayer flushes it before closing: the client reports an SSL error (librdkafka's suite 0097 checks
for it), not a transport error from a connection dropped mid-handshake."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.testing import Broker
from kemu.testing.certs import TestCertificates

TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TestCertificates:
    return TestCertificates.create(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def broker(certs: TestCertificates) -> Iterator[Broker]:
    with Broker(config=certs.broker_config("SSL", client_auth="required")) as made:
        yield made


def handshake_with(broker: Broker, certs: TestCertificates, client_cert: Path, client_key: Path,
                   version: ssl.TLSVersion) -> None:
    context = ssl.create_default_context(cafile=str(certs.ca_file))
    context.minimum_version = context.maximum_version = version
    context.load_cert_chain(str(client_cert), str(client_key))
    host, port = broker.bootstrap("SSL").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        # TLS 1.3 finishes the client's side of the handshake before the server has checked its certificate:
        # the alert comes with the first read.
        tls.sendall(b"\x00\x00\x00\x00")
        tls.recv(1)


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_a_refused_client_certificate_gets_the_alert(broker: Broker, certs: TestCertificates, tmp_path: Path,
                                                     version: ssl.TLSVersion) -> None:
    stranger = TestCertificates.create(tmp_path / "other-ca").client
    with pytest.raises(ssl.SSLError, match="alert"):
        handshake_with(broker, certs, stranger.certificate_file, stranger.key_file, version)


def test_a_trusted_client_certificate_is_served(broker: Broker, certs: TestCertificates) -> None:
    context = ssl.create_default_context(cafile=str(certs.ca_file))
    context.load_cert_chain(str(certs.client.certificate_file), str(certs.client.key_file))
    host, port = broker.bootstrap("SSL").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        assert tls.version() is not None
