"""A JAAS configuration string as Kafka's `sasl.jaas.config` takes it:
`<LoginModule class> <flag> key="value" key2=value2;` — kemu reads the options of the one entry."""

from __future__ import annotations

import re

from kemu.security.errors import SecurityConfigError

_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))')


def jaas_options(text: str, config_name: str) -> dict[str, str]:
    """The options of the single login module entry in `text`; Kafka's JaasConfig messages on bad input."""
    tokens: list[tuple[str, str]] = []
    position = 0
    stripped = text.strip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None or match.end() == position:
            raise SecurityConfigError(f"Invalid JAAS config for {config_name}: unexpected character at "
                                      f"{position}: {stripped[position:position + 10]!r}")
        position = match.end()
        quoted, word, equals, semicolon = match.groups()
        if quoted is not None:
            tokens.append(("value", re.sub(r"\\(.)", r"\1", quoted)))
        elif word is not None:
            tokens.append(("word", word))
        elif equals is not None:
            tokens.append(("=", "="))
        elif semicolon is not None:
            tokens.append((";", ";"))
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[-1][0] != ";":
        raise SecurityConfigError(f"Invalid JAAS config for {config_name}: expected '<LoginModuleClass> "
                                  "<ControlFlag> *(<OptionName>=<OptionValue>);'")
    if tokens[1][0] != "word" or tokens[1][1].lower() not in _FLAGS:
        raise SecurityConfigError(f"Invalid JAAS config for {config_name}: Invalid control flag {tokens[1][1]}")
    if ";" in [kind for kind, _ in tokens[:-1]]:
        raise SecurityConfigError(f"JAAS config property contains more than one login module: {config_name}")
    options: dict[str, str] = {}
    rest = tokens[2:-1]
    if len(rest) % 3:
        raise SecurityConfigError(f"Invalid JAAS config for {config_name}: options must be key=value pairs")
    for index in range(0, len(rest), 3):
        (key_kind, key), (eq_kind, _), (_, value) = rest[index:index + 3]
        if key_kind != "word" or eq_kind != "=":
            raise SecurityConfigError(f"Invalid JAAS config for {config_name}: options must be key=value pairs")
        options[key] = value
    return options
