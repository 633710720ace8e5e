"""Docker HEALTHCHECK for the kemu image: healthy once the broker answers a Kafka ApiVersions
request (kemu.probe: a full round trip through kemu's own codec, not just an open port).

The address comes from the file the entrypoint writes (it knows the --host/--port it passed);
exit 0 = healthy, 1 = not (the reason goes to stdout, which `docker inspect` shows)."""

from __future__ import annotations

import sys
from pathlib import Path

from kemu.probe import api_versions_round_trip

ADDRESS_FILE = Path("/tmp/kemu-healthcheck-address")
DEFAULT_ADDRESS = "127.0.0.1:9092"
# Below the HEALTHCHECK's --timeout, so a hung broker is reported with a reason rather than killed.
TIMEOUT_S = 4.0


def main() -> int:
    address = ADDRESS_FILE.read_text().strip() if ADDRESS_FILE.is_file() else DEFAULT_ADDRESS
    host, _, port = address.rpartition(":")
    try:
        apis = api_versions_round_trip(host, int(port), timeout=TIMEOUT_S, client_id="kemu-healthcheck")
    except (OSError, ValueError) as exc:
        print(f"unhealthy: ApiVersions to {address} failed: {exc}")
        return 1
    print(f"healthy: {address} advertises {len(apis)} APIs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
