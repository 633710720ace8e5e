"""The brokers the corpus is recorded from: the reference Kafka with its shipped development settings, and one
with an authorizer that denies the PLAINTEXT principal (User:ANONYMOUS) everything.

Kafka's own traffic (the broker registering with its controller, transaction markers to itself) must still
be allowed, so on that Kafka the controller listener and an inter-broker listener of its own use SASL/PLAIN
as `User:admin`, the one super user; clients keep the PLAINTEXT listener. A kemu replaying the authorizer
scripts gets the same three broker settings (AUTHORIZER_SETTINGS): it has no controller to let in.
"""

from __future__ import annotations

from compat_tests.reference.kafka import HOST, Node, ReferenceKafka, SaslListener
from kemu.testing.ports import free_port

AUTHORIZER_SETTINGS: dict[str, str] = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": "false",
    "super.users": "User:admin",
}
# A three-node reference Kafka replicates its internal topics three times (compat_tests/reference/kafka.py); a
# three-broker kemu replaying the `cluster` scripts is given the same.
CLUSTER_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "share.coordinator.state.topic.replication.factor": "3",
}
_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
         'password="admin-secret" user_admin="admin-secret";')


class AuthorizerKafka(ReferenceKafka):
    """The reference Kafka with AUTHORIZER_SETTINGS, its own listeners authenticated as the super user."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.settings = {**AUTHORIZER_SETTINGS, **self.settings}
        self._internal_ports: dict[int, int] = {}

    def server_properties(self, node: Node) -> dict[str, str]:
        internal = self._internal_ports.setdefault(node.node_id, free_port())
        properties = super().server_properties(node)
        properties.update({
            "listeners": (f"PLAINTEXT://{HOST}:{node.port},CONTROLLER://{HOST}:{node.controller_port},"
                          f"INTERNAL://{HOST}:{internal}"),
            "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port},INTERNAL://{HOST}:{internal}",
            "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.controller.protocol": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": _JAAS,
            "listener.name.internal.plain.sasl.jaas.config": _JAAS,
        })
        return properties


# The `tokens` scripts: a SASL_PLAINTEXT listener (PLAIN) for the users they log in as, delegation tokens on.
TOKEN_USERS: dict[str, str] = {user: f"{user}-secret" for user in ("alice", "bob", "carol")}
# The authorizer allows what no ACL names, so the scripts' own ACLs decide alone who may create a token for an
# owner (CREATE_TOKENS on the USER) and see a token (DESCRIBE on it, DESCRIBE_TOKENS on its owner).
TOKENS_SETTINGS: dict[str, str] = {"delegation.token.secret.key": "kemu-conformance-token-secret",
                                   "authorizer.class.name": AUTHORIZER_SETTINGS["authorizer.class.name"],
                                   "allow.everyone.if.no.acl.found": "true"}


def kemu_tokens_settings() -> dict[str, str]:
    """A kemu's settings for the `tokens` scripts: TokensKafka's listeners and users, and TOKENS_SETTINGS."""
    from kemu.testing.certs import sasl_settings

    return {"listeners": f"PLAINTEXT://{HOST}:0,SASL_PLAINTEXT://{HOST}:0", "inter.broker.listener.name": "PLAINTEXT",
            **sasl_settings("sasl_plaintext", ("PLAIN",), TOKEN_USERS), **TOKENS_SETTINGS}


class TokensKafka(ReferenceKafka):
    """The reference Kafka with TOKENS_SETTINGS and a SASL_PLAINTEXT listener for TOKEN_USERS, which the
    `tokens` scripts are recorded through (`sasl_addresses`)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.settings = {**TOKENS_SETTINGS, **self.settings}
        self.sasl = self.sasl or SaslListener(mechanisms=("PLAIN",), plain_users=TOKEN_USERS)
