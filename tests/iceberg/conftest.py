"""The same SQLite catalog fixture as tests/data's: the extensions are tested on a real pyiceberg catalog."""

from tests.data.conftest import catalog, make_catalog  # noqa: F401
