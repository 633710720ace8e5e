"""The listen address is handed to getaddrinfo as the bytes Python's own idna encoding would make of it, so
binding needs neither encodings.idna nor stringprep, and what is looked up — or refused — is unchanged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kemu.server.listener import _ascii

# Names of dots, hyphens, colons and letters, with labels from empty to overlong, and some non-ASCII.
LABELS = st.one_of(st.text("ab-_1:", max_size=3), st.just("x" * 63), st.just("x" * 64), st.just("ü"))
HOSTS = st.lists(LABELS, max_size=4).map(".".join)


@given(HOSTS)
@settings(deadline=None)  # timing is no part of it; a loaded machine can take a second
def test_a_host_is_what_the_idna_codec_makes_of_it_or_left_to_it(host: str) -> None:
    try:
        encoded: bytes | None = host.encode("idna")
    except UnicodeError:
        encoded = None
    given_on = _ascii(host)
    if isinstance(given_on, bytes):
        assert given_on == encoded
    else:
        # Left as a str only where the codec refuses it or must do more than return its ASCII bytes.
        assert given_on == host and (encoded is None or not host.isascii())


def test_the_usual_listen_addresses_are_their_ascii_bytes() -> None:
    for host in ("127.0.0.1", "::1", "0.0.0.0", "localhost", "kafka.example.com", ""):
        assert _ascii(host) == host.encode("ascii")
    assert _ascii("a..b") == "a..b" and _ascii("x" * 64) == "x" * 64
