"""Unsecured JWTs (alg none) and OAUTHBEARER client first messages (RFC 7628), for the tests of kemu's
OAUTHBEARER server and the differential SASL tests."""

from __future__ import annotations

import base64
import json


def unsecured_jwt(claims: dict[str, object], header: dict[str, object] | None = None, signature: str = "") -> str:
    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part(header or {'alg': 'none'})}.{part(claims)}.{signature}"


def oauth_first(token: str, authzid: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01\x01".encode()
