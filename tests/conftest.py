import os

from hypothesis import HealthCheck, settings

pytest_plugins = [
    "tests.support.tansu",
    "tests.support.spark",
    "tests.support.schema_registry",
    "tests.support.moto_s3",
    "tests.support.spark_cluster",
]

# CI runs the property tests with a fixed seed, so a submission's result does not
# depend on luck; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")
