pytest_plugins = [
    "tests.support.tansu",
    "tests.support.spark",
]
