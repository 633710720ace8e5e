"""A TLS listener's server context, from Kafka's PEM key store and trust store settings
(`ssl.keystore.type=PEM`), and the principal an mTLS client's certificate names.

Kafka takes the key store either as one PEM file (`ssl.keystore.location`: the private key and the
certificate chain) or as PEM text in the settings themselves (`ssl.keystore.certificate.chain`,
`ssl.keystore.key`); Python's ssl module loads keys from files only, so the inline form goes through a
private temporary file that is gone once loaded.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Any

from kemu.security.principal import PrincipalMapper, distinguished_name
from kemu.security.settings import TlsSettings

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_VERIFY = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def server_context(tls: TlsSettings) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    versions = sorted(_VERSIONS[p] for p in tls.protocols if p in _VERSIONS)
    if not versions:
        raise ssl.SSLError(f"none of ssl.enabled.protocols {list(tls.protocols)} is TLSv1.2 or TLSv1.3")
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    if tls.keystore_location is not None:
        context.load_cert_chain(tls.keystore_location, password=tls.key_password)
    else:
        assert tls.certificate_chain is not None and tls.private_key is not None
        _load_inline(context, tls.certificate_chain, tls.private_key, tls.key_password)
    context.verify_mode = _VERIFY[tls.client_auth]
    if tls.client_auth != "none":
        if tls.truststore_location is None and tls.truststore_certificates is None:
            context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        else:
            context.load_verify_locations(cafile=tls.truststore_location, cadata=tls.truststore_certificates)
    return context


def _load_inline(context: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    descriptor, path = tempfile.mkstemp(prefix="kemu-keystore-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "w") as handle:  # mkstemp made it readable by this user only
            handle.write(key.strip() + "\n" + chain.strip() + "\n")
        context.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def certificate_principal(peer_certificate: dict[str, Any] | None, mapper: PrincipalMapper) -> str | None:
    """`User:<mapped DN>` of a verified client certificate (ssl's getpeercert()), or None without one."""
    if not peer_certificate or "subject" not in peer_certificate:
        return None
    return f"User:{mapper.name(distinguished_name(peer_certificate['subject']))}"
