pytest_plugins = [
    "tests.support.tansu",
    "tests.support.spark",
    "tests.support.schema_registry",
]
