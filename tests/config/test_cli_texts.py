"""The command line's own texts: --version, complete help, one set of fields in both log formats."""

from __future__ import annotations

import io
import logging
import re

import pytest
from rich.console import Console

from connector import cli


def help_of(capsys, *command: str) -> str:
    with pytest.raises(SystemExit):
        cli.main([*command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert re.fullmatch(r"icefloe \S+\n", capsys.readouterr().out)


def test_help_texts_are_whole_and_show_their_defaults(capsys):
    run = help_of(capsys, "run")
    assert "then exit (0 on success); without it the job runs until SIGTERM or Ctrl-C" in run
    assert "--debug" in run and "--metrics-port PORT" in run
    assert "default: http://localhost:8083" in help_of(capsys, "deploy")
    assert "progress bars" not in help_of(capsys, "validate")  # validate draws none


def test_the_terminal_and_the_piped_log_carry_the_same_fields():
    record = logging.LogRecord("connector.job", logging.WARNING, __file__, 1, "Cycle %d: %d records", (3, 7), None)
    piped = cli.log_handler(None).format(record)
    screen = io.StringIO()
    terminal = cli.log_handler(Console(file=screen, width=200, force_terminal=False, color_system=None))
    terminal.handle(record)

    fields = r"\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(,\d+)?\]? +(WARNING) +(connector\.job): (Cycle 3: 7 records)"
    piped_fields = re.fullmatch(fields, piped)
    terminal_fields = re.fullmatch(fields, screen.getvalue().strip())
    assert piped_fields and terminal_fields, (piped, screen.getvalue())
    assert piped_fields.group(3, 4, 5) == terminal_fields.group(3, 4, 5)


def test_every_flag_of_run_is_in_the_configuration_reference():
    from pathlib import Path

    reference = (Path(cli.__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    run = next(action for action in cli._parser()._subparsers._group_actions[0].choices.items()
               if action[0] == "run")[1]
    flags = [option for action in run._actions for option in action.option_strings if option.startswith("--")]
    assert flags and [flag for flag in flags if f"`{flag}" not in reference and flag != "--help"] == []
