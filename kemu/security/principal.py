"""The principal of an mTLS client: its certificate's subject as Java's X500Principal.getName() writes it
(RFC 2253: most specific attribute first, "CN=client,OU=eng,O=acme"), mapped by Kafka's
`ssl.principal.mapping.rules` (SslPrincipalMapper)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kemu.security.errors import SecurityConfigError

# The attribute names Java's RFC 2253 form spells by keyword, as Python's ssl module names them.
_KEYWORDS = {"commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
# The OIDs Java prints in dotted form for the other names Python's ssl module knows.
_OIDS = {"emailAddress": "1.2.840.113549.1.9.1", "serialNumber": "2.5.4.5", "title": "2.5.4.12",
         "surname": "2.5.4.4", "givenName": "2.5.4.42", "initials": "2.5.4.43", "pseudonym": "2.5.4.65",
         "generationQualifier": "2.5.4.44", "dnQualifier": "2.5.4.46", "postalCode": "2.5.4.17",
         "businessCategory": "2.5.4.15"}

Subject = Sequence[Sequence[tuple[str, str]]]


def _escape(value: str) -> str:
    escaped = re.sub(r'([,+"\\<>;])', r"\\\1", value)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped


def _ia5_hex(value: str) -> str:
    # Java writes an attribute without a keyword as its DER encoding in hex; the ones above are IA5 or
    # printable strings, tag 0x16 / 0x13, short form length.
    data = value.encode()
    return "#" + (bytes([0x16, len(data)]) + data).hex()


def distinguished_name(subject: Subject) -> str:
    """`subject` as ssl.SSLSocket.getpeercert() gives it (relative distinguished names, least specific
    first), in Java's RFC 2253 form."""
    rdns: list[str] = []
    for rdn in reversed(subject):
        parts = []
        for name, value in rdn:
            if name in _KEYWORDS:
                parts.append(f"{_KEYWORDS[name]}={_escape(value)}")
            else:
                parts.append(f"{_OIDS.get(name, name)}={_ia5_hex(value)}")
        rdns.append("+".join(parts))
    return ",".join(rdns)


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str
    case: str  # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        mapped = self.pattern.sub(self.replacement, dn, count=1)
        return mapped.lower() if self.case == "L" else mapped.upper() if self.case == "U" else mapped


_RULE = re.compile(r"\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])+)/((?:\\.|[^\\/])*)/([LU]?)[^,\n]*?)\s*(?:[,\n]\s*|$)")


class PrincipalMapper:
    """Kafka's SslPrincipalMapper: the first rule whose pattern matches the whole DN names the principal."""

    def __init__(self, rules: str = "DEFAULT") -> None:
        self.rules_text = rules
        self._rules: list[_Rule] = []
        position = 0
        text = rules.strip()
        while position < len(text):
            match = _RULE.match(text, position)
            if match is None or match.end() == position:
                raise SecurityConfigError(f"Invalid rule: {text[position:]}")
            if match.group(1):
                self._rules.append(_Rule(None, "", ""))
            else:
                try:
                    pattern = re.compile(match.group(2).replace("\\/", "/"))
                except re.error as exc:
                    raise SecurityConfigError(f"Invalid rule: {match.group(0).strip()} ({exc})") from None
                # Java's replacement syntax: $1 is a group, \ escapes.
                replacement = re.sub(r"\$(\d+)", r"\\g<\1>", match.group(3).replace("\\/", "/"))
                self._rules.append(_Rule(pattern, replacement, match.group(4)))
            position = match.end()
        if not self._rules:
            self._rules.append(_Rule(None, "", ""))

    def name(self, dn: str) -> str:
        for rule in self._rules:
            mapped = rule.apply(dn)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {dn}, rules {self.rules_text}")


class NoMatchingRule(Exception):
    """No mapping rule matches a client certificate's DN; Kafka fails that client's authentication."""
