pytest_plugins = [
    "tests.support.tansu",
    "tests.support.spark",
    "tests.support.schema_registry",
    "tests.support.moto_s3",
    "tests.support.spark_cluster",
]
