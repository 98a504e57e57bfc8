"""connector/faults.py: a named point SIGKILLs only when asked, at the n-th hit, once with a marker file."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = "from connector.faults import fault_point\nfor _ in range(3):\n    fault_point('a.point')\nprint('alive')"


def _run(tmp_path, **env):
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60,
                          start_new_session=True, env={**os.environ, **env}, cwd=os.getcwd())


def test_unset_or_another_point_does_nothing(tmp_path):
    assert _run(tmp_path).stdout.strip() == "alive"
    assert _run(tmp_path, ICEFLOE_FAULT_POINT="other.point").stdout.strip() == "alive"
    assert _run(tmp_path, ICEFLOE_FAULT_POINT="a.point:4").stdout.strip() == "alive"  # only 3 hits


def test_the_nth_hit_kills_the_process(tmp_path):
    assert _run(tmp_path, ICEFLOE_FAULT_POINT="a.point:3").returncode == -9


def test_with_a_marker_file_only_the_first_process_is_killed(tmp_path):
    marker = str(tmp_path / "fired")
    assert _run(tmp_path, ICEFLOE_FAULT_POINT="a.point", ICEFLOE_FAULT_ONCE=marker).returncode == -9
    assert _run(tmp_path, ICEFLOE_FAULT_POINT="a.point", ICEFLOE_FAULT_ONCE=marker).stdout.strip() == "alive"
