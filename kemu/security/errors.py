"""The failures of the security core, each carrying the message Kafka gives."""

from __future__ import annotations


class SecurityConfigError(ValueError):
    """A listener or security setting Kafka refuses at start-up; the message is Kafka's."""


class SaslAuthenticationError(Exception):
    """Kafka's SaslAuthenticationException: the client is told this message as it is."""


class SaslMechanismError(Exception):
    """Kafka's SaslException from a mechanism: logged, while the client is told only that its credentials
    were invalid (the message may say whether a user exists)."""


class SaslServerFailure(Exception):
    """An exception Kafka's SASL server does not expect from a mechanism (neither of the above): its
    authenticator answers nothing and closes the connection."""
