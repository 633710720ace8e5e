"""Each listener's security settings, read from Kafka broker properties as Kafka reads them: a setting may
be given for one listener as `listener.name.<listener>.<setting>` (the name lower-cased), which wins over the
plain `<setting>`; the JAAS configuration of a SASL mechanism is `listener.name.<listener>.<mechanism>.
sasl.jaas.config`. All of it is checked at start-up, so a broken setting stops the broker with Kafka's
message rather than failing the first client.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from kemu.hashing import java_hash_set_order
from kemu.kafka_defaults import kafka_default
from kemu.security.errors import SecurityConfigError
from kemu.security.listeners import Endpoint, ListenerSettings, csv, listener_settings

if TYPE_CHECKING:
    # A listener without SASL or TLS settings needs neither: a PLAINTEXT broker starts without importing the
    # SASL mechanisms (and SCRAM), the JAAS parser or the certificate principal mapper.
    from kemu.security.mechanisms import UnsecuredValidatorOptions
    from kemu.security.principal import PrincipalMapper

# The security settings a broker knows: (name, doc), their types and defaults in the one table
# (kemu.kafka_defaults). The broker's config table lists them, so DescribeConfigs shows them and a start-up
# override of them is no unknown setting.
SECURITY_CONFIGS: tuple[tuple[str, str], ...] = (
    ("listener.security.protocol.map", "The security protocol of each listener name."),
    ("inter.broker.listener.name", "The listener brokers use between themselves."),
    ("security.inter.broker.protocol", "The protocol brokers use between themselves."),
    ("sasl.enabled.mechanisms", "The SASL mechanisms a SASL listener offers."),
    ("sasl.mechanism.inter.broker.protocol", "The SASL mechanism between brokers."),
    ("sasl.jaas.config", "A JAAS login module configuration."),
    ("sasl.server.max.receive.size", "The largest frame accepted before authentication."),
    ("connection.failed.authentication.delay.ms",
     "How long a connection whose authentication failed stays open after the failure is sent (KIP-306)."),
    ("connections.max.reauth.ms",
     "The longest a SASL session lasts before the client must re-authenticate (KIP-368); 0: for ever."),
    ("ssl.keystore.type", "The key store format; kemu reads PEM."),
    ("ssl.keystore.location", "A PEM file with the private key and the certificate chain."),
    ("ssl.keystore.password", "The key store password."),
    ("ssl.keystore.certificate.chain", "The certificate chain, in PEM."),
    ("ssl.keystore.key", "The private key, in PEM (PKCS#8)."),
    ("ssl.key.password", "The password of the private key."),
    ("ssl.truststore.type", "The trust store format; kemu reads PEM."),
    ("ssl.truststore.location", "A PEM file of trusted certificates."),
    ("ssl.truststore.password", "The trust store password."),
    ("ssl.truststore.certificates", "Trusted certificates, in PEM."),
    ("ssl.client.auth", "Whether a TLS client must present a certificate: required, requested or none."),
    ("ssl.principal.mapping.rules", "How a client certificate's DN becomes a principal."),
    ("ssl.enabled.protocols", "The TLS versions a TLS listener accepts."),
    ("ssl.protocol", "The TLS protocol."),
    ("ssl.endpoint.identification.algorithm", "Host name verification (clients)."),
    ("kemu.scram.credentials",
     "kemu's own: SCRAM users made at start-up, in kafka-storage format's --add-scram syntax, "
     "e.g. SCRAM-SHA-512=[name=alice,password=alice-secret]; separate several with ';'."),
)
_DEFAULTS = {name: kafka_default(name) for name, _ in SECURITY_CONFIGS}
LISTENER_PREFIX = "listener.name."
_CLIENT_AUTH = ("required", "requested", "none")


# NamedTuples, not frozen dataclasses: every start-up makes its listeners' settings, and a dataclass
# definition compiles its generated methods (~0.5 ms each on a slow machine).
class TlsSettings(NamedTuple):
    keystore_location: str | None = None
    certificate_chain: str | None = None  # PEM text
    private_key: str | None = None  # PEM text
    key_password: str | None = None
    truststore_location: str | None = None
    truststore_certificates: str | None = None  # PEM text
    client_auth: str = "none"
    protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")


class ListenerSecurity(NamedTuple):
    endpoint: Endpoint
    tls: TlsSettings | None = None
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = MappingProxyType({})
    oauth: UnsecuredValidatorOptions | None = None  # None: the unsecured validator's defaults
    reauth_ms: Mapping[str, int] = MappingProxyType({})  # connections.max.reauth.ms per mechanism
    principal_mapper: PrincipalMapper | None = None  # None: DEFAULT (ssl.principal.mapping.rules unset)
    max_receive_size: int = 524288
    failed_authentication_delay_ms: int = 100


def is_security_config(name: str) -> bool:
    return name in _DEFAULTS or name.startswith(LISTENER_PREFIX)


def _get(properties: Mapping[str, str], listener: str, name: str) -> str | None:
    prefixed = f"{LISTENER_PREFIX}{listener.lower()}.{name}"
    if prefixed in properties:
        return properties[prefixed]
    return properties.get(name, _DEFAULTS.get(name))


def listener_security(properties: Mapping[str, str], endpoint: Endpoint) -> ListenerSecurity:
    """What `endpoint` demands of a client, from the broker's properties."""
    name = endpoint.name
    tls = _tls(properties, endpoint) if endpoint.uses_tls else None
    rules = _get(properties, name, "ssl.principal.mapping.rules") or "DEFAULT"
    mapper = None
    if tls is not None or rules != "DEFAULT":
        from kemu.security.principal import PrincipalMapper

        mapper = PrincipalMapper(rules)  # refuses bad rules at start-up on any listener, as Kafka does
    if not endpoint.uses_sasl:
        return ListenerSecurity(endpoint, tls, principal_mapper=mapper)
    from kemu.security.mechanisms import SUPPORTED_MECHANISMS, UnsecuredValidatorOptions

    # In the order Kafka's handshake lists them (a HashSet's), not the setting's.
    mechanisms = tuple(java_hash_set_order([m.upper() for m in csv(_get(properties, name, "sasl.enabled.mechanisms")
                                                                        or "")]))
    if not mechanisms:
        raise SecurityConfigError("No SASL mechanisms are enabled")
    unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unsupported:
        raise SecurityConfigError(
            f"kemu does not support SASL mechanism {unsupported[0]} (sasl.enabled.mechanisms of listener {name}); "
            f"it supports {', '.join(SUPPORTED_MECHANISMS)}")
    plain_users: dict[str, str] = {}
    oauth = UnsecuredValidatorOptions()
    reauth: dict[str, int] = {}
    for mechanism in mechanisms:
        jaas = _mechanism_jaas(properties, name, mechanism)
        if mechanism == "PLAIN":
            if jaas is None:
                raise SecurityConfigError(
                    f"Could not find a 'KafkaServer' or '{name.lower()}.KafkaServer' entry in the JAAS "
                    f"configuration: set {LISTENER_PREFIX}{name.lower()}.plain.sasl.jaas.config, e.g. "
                    'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";')
            plain_users = {key[len("user_"):]: value for key, value in jaas.items() if key.startswith("user_")}
        elif mechanism == "OAUTHBEARER" and jaas is not None:
            try:
                oauth = UnsecuredValidatorOptions.from_jaas(jaas)
            except ValueError as exc:
                raise SecurityConfigError(f"Invalid unsecuredValidatorAllowableClockSkewMs: {exc}") from None
        reauth[mechanism] = _reauth_ms(properties, name, mechanism)
    receive = int(_get(properties, name, "sasl.server.max.receive.size") or 524288)
    delay = int(_get(properties, name, "connection.failed.authentication.delay.ms") or 100)
    return ListenerSecurity(endpoint, tls, mechanisms, plain_users, oauth, reauth, mapper, receive, delay)


def _mechanism_jaas(properties: Mapping[str, str], listener: str, mechanism: str) -> dict[str, str] | None:
    from kemu.security.jaas import jaas_options

    key = f"{LISTENER_PREFIX}{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    text = properties.get(key)
    return None if text is None else jaas_options(text, key)


def _reauth_ms(properties: Mapping[str, str], listener: str, mechanism: str) -> int:
    key = f"{LISTENER_PREFIX}{listener.lower()}.{mechanism.lower()}.connections.max.reauth.ms"
    text = properties.get(key) or _get(properties, listener, "connections.max.reauth.ms") or "0"
    try:
        return int(text.strip())
    except ValueError:
        raise SecurityConfigError(f"Invalid value {text} for configuration connections.max.reauth.ms: "
                                  "Not a number of type LONG") from None


def _tls(properties: Mapping[str, str], endpoint: Endpoint) -> TlsSettings:
    name = endpoint.name
    keystore_type = (_get(properties, name, "ssl.keystore.type") or "JKS").upper()
    location = _get(properties, name, "ssl.keystore.location")
    chain = _get(properties, name, "ssl.keystore.certificate.chain")
    key = _get(properties, name, "ssl.keystore.key")
    if location is None and chain is None:
        raise SecurityConfigError(f"Listener {name} uses {endpoint.protocol} but has no key store: set "
                                  "ssl.keystore.type=PEM with ssl.keystore.location, or ssl.keystore.certificate.chain "
                                  "and ssl.keystore.key")
    if keystore_type != "PEM":
        raise SecurityConfigError(f"kemu reads PEM key stores only: set ssl.keystore.type=PEM for listener {name} "
                                  f"(it is {keystore_type})")
    if location is not None and (chain is not None or key is not None):
        raise SecurityConfigError("Invalid PEM keystore configs: ssl.keystore.location may not be set with "
                                  "ssl.keystore.certificate.chain or ssl.keystore.key")
    if chain is not None and key is None:
        raise SecurityConfigError("Invalid PEM keystore configs: ssl.keystore.key must be set with "
                                  "ssl.keystore.certificate.chain")
    trust_location = _get(properties, name, "ssl.truststore.location")
    trust_certs = _get(properties, name, "ssl.truststore.certificates")
    if (trust_location or trust_certs) and (_get(properties, name, "ssl.truststore.type") or "JKS").upper() != "PEM":
        raise SecurityConfigError(f"kemu reads PEM trust stores only: set ssl.truststore.type=PEM for listener {name}")
    # KIP-684: on a SASL_SSL listener only the listener's own ssl.client.auth counts.
    if endpoint.protocol == "SASL_SSL":
        client_auth = properties.get(f"{LISTENER_PREFIX}{name.lower()}.ssl.client.auth", "none")
    else:
        client_auth = _get(properties, name, "ssl.client.auth") or "none"
    client_auth = client_auth.strip().lower()
    if client_auth not in _CLIENT_AUTH:
        raise SecurityConfigError(f"Invalid value {client_auth} for configuration ssl.client.auth: String must be "
                                  f"one of: {', '.join(_CLIENT_AUTH)}")
    protocols = tuple(csv(_get(properties, name, "ssl.enabled.protocols") or "TLSv1.2,TLSv1.3"))
    return TlsSettings(location, chain, key, _get(properties, name, "ssl.key.password"), trust_location,
                       trust_certs, client_auth, protocols)


class SecuritySettings(NamedTuple):
    listeners: ListenerSettings
    by_listener: Mapping[str, ListenerSecurity]


def security_settings(properties: Mapping[str, str], default_listeners: str) -> SecuritySettings:
    """Every listener with what it demands; raises SecurityConfigError with Kafka's message."""
    listeners = listener_settings(properties, default_listeners)
    by_listener = {e.name: listener_security(properties, e) for e in listeners.listeners}
    return SecuritySettings(listeners, by_listener)
