"""ApiVersions at every version and at v127, and every API kemu serves one version above the highest Kafka's
spec has, and below the lowest: Kafka answers the ApiVersions with UNSUPPORTED_VERSION and closes the
connection on the others."""

from __future__ import annotations

from compat_tests.conformance.scripts import KEMU_HIGHEST, spec_versions, step
from compat_tests.conformance.steps import Script

# The epoch of the finalized features is the offset of the metadata record that finalized them: how much
# metadata the cluster wrote before, not a behaviour.
EPOCH = {"varying": {"finalized_features_epoch": "metadata_offset"},
         "why": "the finalized features' epoch is the metadata log offset that finalized them"}
SOFTWARE = {"client_software_name": "kemu-conformance", "client_software_version": "1.0"}
# ApiVersions' lists by their natural ids: the API key, and the feature's name (a feature one broker does not
# list then shows as one difference, not as every later one shifted).
API_VERSIONS_KEYS = {"api_keys": "api_key", "supported_features": "name", "finalized_features": "name"}


def scripts() -> list[Script]:
    api_versions = [step(f"v{version}", 18, version, SOFTWARE, key_by=API_VERSIONS_KEYS, **EPOCH)
                    for version in range(0, 6)]
    api_versions += [
        step("v127", 18, 127, SOFTWARE, key_by=API_VERSIONS_KEYS, **EPOCH),
        step("v3 without software name", 18, 3, {"client_software_name": "", "client_software_version": ""},
             key_by=API_VERSIONS_KEYS, **EPOCH),
        step("v3 bad software name", 18, 3, {"client_software_name": "bad name!", "client_software_version": "1"},
             key_by=API_VERSIONS_KEYS, **EPOCH),
    ]
    above = [step(f"key {key} v{max(spec_versions(key)) + 1}", key, max(spec_versions(key)) + 1, {})
             for key in sorted(KEMU_HIGHEST)]
    # The versions below Kafka 4.3's lowest (Kafka 4.0 removed them: KIP-896; kemu declared all of them from
    # v0 when these scripts were written): v0 and the one just below Kafka's lowest.
    below = [step(f"key {key} v{version}", key, version, {})
             for key in sorted(KEMU_HIGHEST)
             for version in sorted({0, min(spec_versions(key)) - 1})
             if 0 <= version < min(spec_versions(key))]
    # An API key no Kafka has, and APIs Kafka 4.3 serves that kemu did not when these were written (log dirs,
    # quotas, delegation tokens, features, share and streams groups — AlterReplicaLogDirs, UpdateFeatures and
    # StreamsGroupHeartbeat among them, served since): what each answers a request with an empty body.
    unknown = [step(f"key {key} v0", key, 0, {}) for key in (93 + 7, 1000)]
    unknown += [step(f"key {key} v{version}", key, version, {}) for key, version in (
        (34, 1), (38, 3), (48, 1), (57, 1), (76, 1), (88, 0))]
    return [Script("api_versions.versions", api_versions), Script("unsupported.above_max", above),
            Script("unsupported.below_min", below), Script("unsupported.unserved_apis", unknown)]
