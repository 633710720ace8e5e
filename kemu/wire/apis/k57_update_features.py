"""UpdateFeatures (key 57), versions 0-2; flexible in all versions.

v1 adds the upgrade type (1 upgrade, 2 safe downgrade, 3 unsafe downgrade; v0's allow_downgrade is
deprecated) and validate_only; v2's response no longer lists a result per feature.
"""

from kemu.wire.schema import F, api

API = api(
    57, "UpdateFeatures", "0-2", "0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F("feature_updates", "[]", fields=[
            F("feature", "string"),
            F("max_version_level", "int16"),
            F("allow_downgrade", "bool", "0"),
            F("upgrade_type", "int8", "1+", default=1),
        ]),
        F("validate_only", "bool", "1+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("results", "[]", "0-1", fields=[
            F("feature", "string"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
        ]),
    ],
)
