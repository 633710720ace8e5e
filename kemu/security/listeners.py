"""Kafka's listener settings: `listeners`, `advertised.listeners`, `listener.security.protocol.map` and
`inter.broker.listener.name`, parsed and validated as KafkaConfig does at start-up, with its messages.

A listener is `NAME://host:port`; the name (upper-cased) picks the security protocol from the map, whose
default maps each protocol's own name onto itself. An empty host binds every interface.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from kemu.kafka_defaults import str_setting
from kemu.security.errors import SecurityConfigError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"

# SocketServerConfigs.URI_PARSE_REGEXP: a name, then a host (bracketed for IPv6) and a port.
_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


# NamedTuples, not frozen dataclasses: every start-up reads its listeners, and a dataclass definition
# compiles its generated methods (~0.5 ms each on a slow machine).
class Endpoint(NamedTuple):
    name: str  # the listener name, upper-cased as Kafka normalises it
    protocol: str
    host: str  # "" binds every interface
    port: int  # 0 picks a free port

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


class ListenerSettings(NamedTuple):
    listeners: tuple[Endpoint, ...]
    advertised: tuple[Endpoint, ...]
    inter_broker: str

    def advertised_for(self, name: str) -> Endpoint | None:
        return next((e for e in self.advertised if e.name == name), None)


def csv(text: str) -> list[str]:
    """Kafka's Csv.parseCsvList: comma-separated, trimmed, empty items dropped."""
    return [item.strip() for item in text.split(",") if item.strip()]


def protocol_map(text: str) -> dict[str, str]:
    """`listener.security.protocol.map`: NAME:PROTOCOL pairs."""
    found: dict[str, str] = {}
    for item in csv(text):
        name, sep, protocol = item.rpartition(":")
        if not sep or not name.strip():
            raise SecurityConfigError(
                f"Error parsing configuration property 'listener.security.protocol.map': Map entry '{item}' "
                "is improperly formatted; it should be of the form 'key:value'")
        if protocol.strip() not in PROTOCOLS:
            raise SecurityConfigError(
                f"Invalid security protocol `{protocol.strip()}` defined in listener.security.protocol.map")
        found[name.strip().upper()] = protocol.strip()
    return found


def endpoints(text: str, protocols: Mapping[str, str], *, distinct_ports: bool = True) -> tuple[Endpoint, ...]:
    """A listener list, each name mapped onto its protocol, checked as Kafka's listenerListToEndPoints."""
    items = csv(text)
    shown = "[" + ", ".join(items) + "]"
    parsed: list[Endpoint] = []
    try:
        for item in items:
            match = _ENDPOINT.match(item)
            if match is None:
                raise SecurityConfigError(f"Unable to parse {item} to a broker endpoint")
            name = match.group(1).upper()
            protocol = protocols.get(name)
            if protocol is None:
                raise SecurityConfigError(f"No security protocol defined for listener {name}")
            port = int(match.group(3))
            if not 0 <= port <= 65535:
                raise SecurityConfigError(f"Unable to parse {item} to a broker endpoint")
            parsed.append(Endpoint(name, protocol, match.group(2), port))
    except SecurityConfigError as exc:
        raise SecurityConfigError(f"Error creating broker listeners from '{shown}': {exc}") from None
    if len({e.name for e in parsed}) != len(parsed):
        raise SecurityConfigError(f"Error creating broker listeners from '{shown}': Each listener must have a "
                                  f"different name, listeners: {shown}")
    if distinct_ports:
        by_port: dict[int, list[Endpoint]] = {}
        for endpoint in parsed:
            if endpoint.port != 0:
                by_port.setdefault(endpoint.port, []).append(endpoint)
        for port, same in by_port.items():
            if len(same) > 1 and not _one_ipv4_one_ipv6(same):
                raise SecurityConfigError(
                    f"Error creating broker listeners from '{shown}': Each listener must have a different port "
                    f"unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: "
                    f"{shown}, port: {port}")
    return tuple(parsed)


def _one_ipv4_one_ipv6(same: list[Endpoint]) -> bool:
    if len(same) != 2:
        return False
    import ipaddress  # only for listeners sharing a port: not on a usual start-up

    try:
        versions = {ipaddress.ip_address(e.host).version for e in same}
    except ValueError:
        return False
    return versions == {4, 6}


def listener_settings(properties: Mapping[str, str], default_listeners: str) -> ListenerSettings:
    """The listener settings among Kafka broker `properties`; `default_listeners` stands in for an unset
    `listeners` (kemu's --host/--port)."""
    protocols = protocol_map(properties.get("listener.security.protocol.map", DEFAULT_PROTOCOL_MAP))
    listeners = endpoints(properties.get("listeners", default_listeners), protocols)
    if not listeners:
        raise SecurityConfigError("listeners must contain at least one value")
    advertised_text = properties.get("advertised.listeners")
    advertised = listeners if advertised_text is None else endpoints(advertised_text, protocols,
                                                                     distinct_ports=False)
    names = [e.name for e in listeners]
    stray = [e.name for e in advertised if e.name not in names]
    if stray:
        raise SecurityConfigError(
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            f"Found {','.join(e.name for e in advertised)}. The valid options based on the current configuration "
            f"are {','.join(names)}")
    for endpoint in advertised:
        if advertised_text is not None and endpoint.host == "0.0.0.0":
            raise SecurityConfigError("advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
                                      "Use a routable IP address.")
    inter_broker = _inter_broker(properties, protocols, advertised)
    return ListenerSettings(listeners, advertised, inter_broker)


def _inter_broker(properties: Mapping[str, str], protocols: Mapping[str, str],
                  advertised: tuple[Endpoint, ...]) -> str:
    name = properties.get("inter.broker.listener.name")
    if name is not None:
        if "security.inter.broker.protocol" in properties:
            raise SecurityConfigError("Only one of inter.broker.listener.name and security.inter.broker.protocol "
                                      "should be set.")
        name = name.strip().upper()
        if name not in protocols:
            raise SecurityConfigError(f"Listener with name {name} defined in inter.broker.listener.name not found "
                                      "in listener.security.protocol.map.")
    else:
        name = str_setting(properties, "security.inter.broker.protocol").strip()
        if name not in PROTOCOLS:
            raise SecurityConfigError(
                f"Invalid security protocol `{name}` defined in security.inter.broker.protocol")
    if all(e.name != name for e in advertised):
        raise SecurityConfigError(
            "requirement failed: inter.broker.listener.name must be a listener name defined in "
            "advertised.listeners. The valid options based on currently configured listeners are "
            + ",".join(e.name for e in advertised))
    return name
