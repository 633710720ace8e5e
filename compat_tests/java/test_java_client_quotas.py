"""The Java Admin's client quota calls (src/ClientQuotas.java; kafka-clients 4.3 and 3.9) against `kemu serve`
and the reference Kafka, the outcomes compared: alterClientQuotas of user, user and client-id, and client-id
entities (validate-only, removal, and the refusals Kafka's controller gives), describeClientQuotas with exact,
any-name and strict filters, and the filter Kafka refuses."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import BOTH_LINES
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import unique

PROGRAM = "ClientQuotas"
INVALID_REQUEST = "org.apache.kafka.common.errors.InvalidRequestException"


@BOTH_LINES
def test_alter_and_describe_client_quotas(java_pair: Pair, java: JavaClient) -> None:
    user, client, other = unique("java-cq-user"), unique("java-cq-client"), unique("java-cq-other")

    def scenario(target: Target) -> dict[str, Any]:
        def run(*args: str) -> Any:
            return java.run(PROGRAM, target.bootstrap, *args)

        return {
            "set": run("alter", f"user={user},client-id={client}", "producer_byte_rate=1024",
                       "request_percentage=50"),
            "set client": run("alter", f"client-id={client}", "consumer_byte_rate=4096"),
            "set user": run("alter", f"user={user}", "controller_mutation_rate=2.5"),
            "validate only": run("alter", "--validate", f"user={other}", "producer_byte_rate=1"),
            "ip with user": run("alter", f"ip=192.0.2.5,user={user}", "connection_creation_rate=1"),
            "unknown key": run("alter", f"user={user}", "fetch_byte_rate=1"),
            "fractional": run("alter", f"client-id={client}", "producer_byte_rate=1.5"),
            "user": run("describe", "loose", f"user={user}"),
            "user only": run("describe", "strict", f"user={user}"),
            "client only": run("describe", "strict", f"client-id={client}"),
            "user and any client": run("describe", "loose", f"user={user}", "client-id"),
            "validated only": run("describe", "loose", f"user={other}"),
            "removed": run("alter", f"user={user},client-id={client}", "producer_byte_rate=remove"),
            "after removal": run("describe", "strict", f"user={user}", f"client-id={client}"),
            "ip and user filter": run("describe", "loose", "ip", f"user={user}"),
        }

    kafka, kemu = java_pair.both(scenario)
    check(f"java.{java.line}.client_quotas", kafka, kemu)
    assert kemu["set"] is None and kemu["validate only"] is None
    assert kemu["ip with user"]["class"] == INVALID_REQUEST
    assert kemu["user and any client"] == {f"client-id={client},user={user}": {"producer_byte_rate": 1024.0,
                                                                              "request_percentage": 50.0}}
    assert kemu["after removal"] == {f"client-id={client},user={user}": {"request_percentage": 50.0}}
    assert kemu["validated only"] == {}
