"""A real JVM as the oracle for Java's number texts (see tests/support/java_oracle)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ORACLE_SOURCE = Path(__file__).parent.parent / "support" / "java_oracle" / "JavaText.java"


def _jdk_tool(name: str) -> str:
    """``$JAVA_HOME/bin/<name>`` when JAVA_HOME is set (as Spark uses it), else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    tool = os.path.join(java_home, "bin", name) if java_home else shutil.which(name)
    if not tool or not os.path.exists(tool):
        pytest.fail(f"{name} not found (JAVA_HOME or PATH): the Java oracle tests need a JDK", pytrace=False)
    return tool


class JavaOracle:
    """Sends a batch of requests to one JVM and returns its answers, one per request."""

    def __init__(self, classes: Path):
        self.classes = classes
        self.java = _jdk_tool("java")
        self.feature = int(self.ask([("V",)])[0])

    def ask(self, requests: list[tuple[str, ...]]) -> list[str]:
        stdin = "".join("\t".join(request) + "\n" for request in requests)
        result = subprocess.run(
            [self.java, "-cp", str(self.classes), "JavaText"],
            input=stdin.encode("utf-8"), capture_output=True, check=True, timeout=120,
        )
        answers = result.stdout.decode("utf-8").split("\n")[:-1]
        assert len(answers) == len(requests), result.stderr.decode()
        return answers


@pytest.fixture(scope="session")
def java_oracle(tmp_path_factory: pytest.TempPathFactory) -> JavaOracle:
    classes = tmp_path_factory.mktemp("java_oracle")
    subprocess.run([_jdk_tool("javac"), "-d", str(classes), str(ORACLE_SOURCE)], check=True, timeout=120)
    return JavaOracle(classes)
