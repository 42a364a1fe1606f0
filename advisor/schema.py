"""The profile's JSON schema, generated from ``advisor.models.Profile``.

A committed copy lives in ``docs/profile.schema.json``; ``tests/unit/test_schema.py`` fails when it
is stale (regenerate with ``advisor schema > docs/profile.schema.json``).
"""

from __future__ import annotations

import json


def profile_json_schema() -> str:
    """The JSON schema of a profile, as deterministic text ending in a newline."""
    from advisor.models import Profile

    schema = Profile.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hpc-advisor profile"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
