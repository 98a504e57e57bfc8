import os

from hypothesis import HealthCheck, settings

from connector.api.declined import STRICT_ENV

# A batch form that fails unexpectedly is a bug: the suite makes it raise instead of
# quietly taking the per-record path (set before Spark starts, so executors inherit it).
os.environ[STRICT_ENV] = "1"

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
