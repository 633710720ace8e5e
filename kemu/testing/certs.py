"""Throwaway TLS certificates for tests: a CA, a broker certificate for the loopback names, and client
certificates, as PEM files — and the Kafka broker settings that use them, so a test gets a TLS broker in
one line:

    certs = TestCertificates.create(tmp_path)
    with Broker(config=certs.broker_config("SASL_SSL", users={"alice": "alice-secret"})) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_SSL",
                             "ssl.ca.location": str(certs.ca_file), "sasl.mechanism": "SCRAM-SHA-512",
                             "sasl.username": "alice", "sasl.password": "alice-secret"})

Needs the `cryptography` package: `pip install 'kemu[tls]'`.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

try:
    from cryptography import x509
except ModuleNotFoundError as missing:  # a user's first TLS test: say which extra brings it
    raise ModuleNotFoundError("kemu.testing.certs needs the cryptography package: pip install 'kemu[tls]'",
                              name=missing.name) from missing
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_NAME_OIDS = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME,
              "L": NameOID.LOCALITY_NAME, "ST": NameOID.STATE_OR_PROVINCE_NAME, "C": NameOID.COUNTRY_NAME}
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _name(dn: str) -> x509.Name:
    """"CN=client,OU=eng,O=acme" (most specific first, as Kafka prints a DN) as an X.509 name."""
    attributes = []
    for part in reversed([p.strip() for p in dn.split(",") if p.strip()]):
        key, _, value = part.partition("=")
        attributes.append(x509.NameAttribute(_NAME_OIDS[key.strip().upper()], value.strip()))
    return x509.Name(attributes)


def _pem_key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption() if password is None else serialization.BestAvailableEncryption(password.encode()))
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


@dataclass(frozen=True, slots=True)
class Identity:
    """A certificate and its key: separate PEM files, and one with both (Kafka's PEM key store file)."""

    certificate_file: Path
    key_file: Path
    keystore_file: Path
    subject: str


class TestCertificates:
    """A CA in `directory`, a broker certificate signed by it for `hostnames`, and a client certificate
    (`client`); `issue()` makes more. Valid from a day ago for a year."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, directory: Path, hostnames: Iterable[str] = LOOPBACK_NAMES,
                 client_subject: str = "CN=client,OU=test,O=kemu", key_password: str | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        self._ca_name = _name("CN=kemu test CA,O=kemu")
        self._ca = (self._builder(self._ca_name, self._ca_key.public_key())
                    .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                    .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                 content_commitment=False, key_encipherment=False,
                                                 data_encipherment=False, key_agreement=False,
                                                 encipher_only=False, decipher_only=False), critical=True)
                    .sign(self._ca_key, hashes.SHA256()))
        self.ca_file = self.directory / "ca.pem"
        self.ca_file.write_bytes(self._ca.public_bytes(serialization.Encoding.PEM))
        self.key_password = key_password
        self.broker = self.issue("broker", "CN=localhost,OU=broker,O=kemu", hostnames=hostnames, server=True,
                                 password=key_password)
        self.client = self.issue("client", client_subject)

    @classmethod
    def create(cls, directory: Path | str, **options: object) -> TestCertificates:
        return cls(Path(directory), **options)  # type: ignore[arg-type]

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(self._ca_name)
                .public_key(public_key).serial_number(x509.random_serial_number())
                .not_valid_before(self._now).not_valid_after(self._now + datetime.timedelta(days=366)))

    def issue(self, stem: str, subject: str, *, hostnames: Iterable[str] = (), server: bool = False,
              password: str | None = None) -> Identity:
        """A certificate for `subject` (e.g. "CN=alice,O=acme") signed by the CA, as `<stem>.pem`,
        `<stem>.key` and `<stem>-keystore.pem` (key then chain)."""
        key = ec.generate_private_key(ec.SECP256R1())
        builder = self._builder(_name(subject), key.public_key())
        names: list[x509.GeneralName] = []
        for host in hostnames:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        certificate = builder.sign(self._ca_key, hashes.SHA256())
        certificate_pem = certificate.public_bytes(serialization.Encoding.PEM)
        key_pem = _pem_key(key, password)
        identity = Identity(self.directory / f"{stem}.pem", self.directory / f"{stem}.key",
                            self.directory / f"{stem}-keystore.pem", subject)
        identity.certificate_file.write_bytes(certificate_pem)
        identity.key_file.write_bytes(key_pem)
        identity.keystore_file.write_bytes(key_pem + certificate_pem)
        for path in (identity.key_file, identity.keystore_file):
            path.chmod(0o600)
        return identity

    def tls_settings(self, listener: str | None = None, *, client_auth: str | None = None) -> dict[str, str]:
        """Kafka's PEM key store and trust store settings for the broker certificate, for every listener or
        (`listener`) for one: `listener.name.<listener>.ssl.*`."""
        prefix = "" if listener is None else f"listener.name.{listener.lower()}."
        settings = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.broker.keystore_file),
                    "ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_file)}
        if self.key_password is not None:
            settings["ssl.key.password"] = self.key_password
        if client_auth is not None:
            settings["ssl.client.auth"] = client_auth
        return {prefix + name: value for name, value in settings.items()}

    def broker_config(self, protocol: str = "SSL", *, client_auth: str | None = None,
                      mechanisms: Iterable[str] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"),
                      users: Mapping[str, str] | None = None, host: str = "127.0.0.1",
                      extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The settings of a broker whose one listener (named as its protocol, on a free port of `host`)
        speaks `protocol` with these certificates; for SASL, `mechanisms` enabled and `users` (name:
        password) given both PLAIN and SCRAM credentials."""
        protocol = protocol.upper()
        listener = protocol.lower()
        config = {"listeners": f"{protocol}://{host}:0", "inter.broker.listener.name": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            config.update(self.tls_settings(listener if client_auth is not None and protocol == "SASL_SSL" else None,
                                            client_auth=client_auth))
        if protocol.startswith("SASL"):
            config.update(sasl_settings(listener, mechanisms, users or {}))
        config.update(extra or {})
        return config


def sasl_settings(listener: str, mechanisms: Iterable[str], users: Mapping[str, str]) -> dict[str, str]:
    """A SASL listener's settings: the mechanisms it enables, PLAIN's JAAS users, and SCRAM credentials for
    the same users (kemu.scram.credentials)."""
    enabled = [m.upper() for m in mechanisms]
    prefix = f"listener.name.{listener.lower()}."
    config = {prefix + "sasl.enabled.mechanisms": ",".join(enabled)}
    if "PLAIN" in enabled:
        options = " ".join(f'user_{name}="{password}"' for name, password in users.items())
        config[prefix + "plain.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {options};")
    if "OAUTHBEARER" in enabled:
        config[prefix + "oauthbearer.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;")
    scram = [m for m in enabled if m.startswith("SCRAM-")]
    if scram and users:
        config["kemu.scram.credentials"] = ";".join(
            f"{m}=[name={name},password={password}]" for m in scram for name, password in users.items())
    return config
