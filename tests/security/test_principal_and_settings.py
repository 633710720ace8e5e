"""A client certificate's DN as Kafka prints it, ssl.principal.mapping.rules, JAAS options, each listener's
security settings, and the SCRAM credential store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.security.errors import SecurityConfigError
from kemu.security.jaas import jaas_options
from kemu.security.principal import NoMatchingRule, PrincipalMapper, distinguished_name
from kemu.security.scram import ScramCredentialStore, credential_from_password, parse_add_scram
from kemu.security.settings import listener_security, security_settings

SUBJECT = ((("countryName", "US"),), (("organizationName", "Acme, Inc."),), (("organizationalUnitName", "eng"),),
           (("commonName", "alice"),))


def test_dn_is_most_specific_first_with_rfc2253_escapes() -> None:
    assert distinguished_name(SUBJECT) == "CN=alice,OU=eng,O=Acme\\, Inc.,C=US"


def test_mapping_rules_first_match_wins_with_case_and_default() -> None:
    mapper = PrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U, DEFAULT")
    assert mapper.name("CN=kafka-svc,OU=ServiceUsers,O=Acme") == "kafka-svc"
    assert mapper.name("CN=alice,OU=eng,O=Acme") == "ALICE@ENG"
    assert mapper.name("O=Acme") == "O=Acme"
    assert PrincipalMapper().name("CN=alice,OU=eng") == "CN=alice,OU=eng"


def test_no_matching_rule_is_kafkas_failure() -> None:
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=x, rules RULE:"):
        PrincipalMapper("RULE:^CN=admin$/admin/L").name("CN=x")


def test_mapping_rules_are_checked_at_start_up_on_any_listener() -> None:
    # As Kafka's channel builders do for every listener: bad rules stop a PLAINTEXT-only broker too, though
    # only an SSL listener ever maps a certificate (a PLAINTEXT listener with the DEFAULT rules makes no mapper).
    with pytest.raises(SecurityConfigError, match="Invalid rule: RULE:nope"):
        security_settings({"ssl.principal.mapping.rules": "RULE:nope"}, "PLAINTEXT://:9092")
    plaintext = security_settings({}, "PLAINTEXT://:9092").by_listener["PLAINTEXT"]
    assert plaintext.principal_mapper is None and plaintext.oauth is None
    mapped = security_settings({"ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/L"}, "PLAINTEXT://:9092")
    assert mapped.by_listener["PLAINTEXT"].principal_mapper.name("CN=Bob") == "bob"  # type: ignore[union-attr]


def test_jaas_options_and_its_refusals() -> None:
    options = jaas_options('org.apache.kafka.common.security.plain.PlainLoginModule required '
                           'username="admin" password="a b;c" user_alice=alice-secret;', "x")
    assert options == {"username": "admin", "password": "a b;c", "user_alice": "alice-secret"}
    with pytest.raises(SecurityConfigError, match="Invalid control flag"):
        jaas_options("Module mandatory;", "x")
    with pytest.raises(SecurityConfigError, match="more than one login module"):
        jaas_options("A required; B required;", "x")


def test_a_listener_reads_its_prefixed_settings_first() -> None:
    settings = security_settings({
        "listeners": "INSIDE://:9092,OUTSIDE://:9093", "inter.broker.listener.name": "INSIDE",
        "listener.security.protocol.map": "INSIDE:SASL_PLAINTEXT,OUTSIDE:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.outside.sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
        "listener.name.outside.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="b";',
        "connections.max.reauth.ms": "60000", "listener.name.outside.oauthbearer.connections.max.reauth.ms": "5000",
    }, "PLAINTEXT://:9092")
    inside, outside = settings.by_listener["INSIDE"], settings.by_listener["OUTSIDE"]
    assert inside.mechanisms == ("SCRAM-SHA-512",) and inside.reauth_ms == {"SCRAM-SHA-512": 60000}
    assert outside.mechanisms == ("PLAIN", "OAUTHBEARER") and dict(outside.plain_users) == {"bob": "b"}
    assert outside.reauth_ms == {"PLAIN": 60000, "OAUTHBEARER": 5000}


@pytest.mark.parametrize(("properties", "message"), [
    ({"sasl.enabled.mechanisms": "GSSAPI"}, "kemu does not support SASL mechanism GSSAPI"),
    ({"sasl.enabled.mechanisms": "PLAIN"}, "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry"),
    ({"sasl.enabled.mechanisms": ""}, "No SASL mechanisms are enabled"),
])
def test_sasl_listener_refusals(properties: dict[str, str], message: str) -> None:
    with pytest.raises(SecurityConfigError, match=message):
        security_settings({"listeners": "SASL_PLAINTEXT://:9092", "inter.broker.listener.name": "SASL_PLAINTEXT",
                           **properties}, "")


@pytest.mark.parametrize(("properties", "message"), [
    ({}, "Listener SSL uses SSL but has no key store"),
    ({"ssl.keystore.location": "/k.pem"}, "kemu reads PEM key stores only: set ssl.keystore.type=PEM"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.location": "/k.pem", "ssl.client.auth": "always"},
     "Invalid value always for configuration ssl.client.auth"),
    ({"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": "-----BEGIN"},
     "ssl.keystore.key must be set with ssl.keystore.certificate.chain"),
])
def test_tls_listener_refusals(properties: dict[str, str], message: str) -> None:
    with pytest.raises(SecurityConfigError, match=message):
        security_settings({"listeners": "SSL://:9093", "inter.broker.listener.name": "SSL", **properties}, "")


def test_sasl_ssl_client_auth_only_from_the_listener_prefix() -> None:
    base = {"ssl.keystore.type": "PEM", "ssl.keystore.location": "/k.pem", "ssl.client.auth": "required",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256"}
    endpoint = security_settings({"listeners": "SASL_SSL://:9093", "inter.broker.listener.name": "SASL_SSL",
                                  **base}, "").listeners.listeners[0]
    assert listener_security(base, endpoint).tls.client_auth == "none"  # type: ignore[union-attr]
    prefixed = {**base, "listener.name.sasl_ssl.ssl.client.auth": "requested"}
    assert listener_security(prefixed, endpoint).tls.client_auth == "requested"  # type: ignore[union-attr]


def test_scram_store_persists_and_add_scram_syntax(tmp_path: Path) -> None:
    store = ScramCredentialStore(tmp_path)
    for user, mechanism, credential in parse_add_scram(
            "SCRAM-SHA-512=[name=alice,password=alice-secret];SCRAM-SHA-256=[name=bob,password=\"b\",iterations=8192]"):
        store.put(user, mechanism, credential)
    reopened = ScramCredentialStore(tmp_path)
    assert reopened.users() == ["alice", "bob"]
    assert reopened.get("bob", "SCRAM-SHA-256").iterations == 8192  # type: ignore[union-attr]
    assert reopened.get("alice", "SCRAM-SHA-512") == store.get("alice", "SCRAM-SHA-512")
    assert reopened.delete("alice", "SCRAM-SHA-512") and ScramCredentialStore(tmp_path).users() == ["bob"]
    with pytest.raises(SecurityConfigError, match="You must supply 'password' to add-scram"):
        parse_add_scram("SCRAM-SHA-256=[name=x]")
    with pytest.raises(SecurityConfigError, match="must be >= 4096 and <= 16384"):
        parse_add_scram("SCRAM-SHA-256=[name=x,password=y,iterations=10]")
    assert credential_from_password("SCRAM-SHA-256", "p", salt=b"s") == credential_from_password(
        "SCRAM-SHA-256", "p", salt=b"s")
