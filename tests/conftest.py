"""Hypothesis profiles: `ci` (derandomised, bounded; selected by .ci/run via HYPOTHESIS_PROFILE=ci)
and `dev` (random, more examples). The default is `dev`."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
