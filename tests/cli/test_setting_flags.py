"""A flag that names one setting is an alias of ``--set KEY=VALUE``: the same config, the
same checks, and the last one on the command line wins."""

from __future__ import annotations

import argparse

import pytest

from thresher.cli._common import SETTING_FLAGS, load_config
from thresher.cli.main import _build_parser, main
from thresher.config import Config

#: each command with aliases, and the arguments it requires
_COMMANDS = {
    "search": ["q", "--index", "idx"],
    "index": ["docs", "--index", "idx"],
    "grep": ["x", "--index", "idx"],
    "serve": ["--index", "idx"],
    "mcp": ["--index", "idx"],
}
_VALUES = {
    "--budget": "9000",
    "--wall-time": "12.5",
    "--chunk-tokens": "256",
    "--embedder": "minilm-int8",
    "--limit": "7",
}


def _parse(command: str, *argv: str) -> argparse.Namespace:
    parser, _, sub = _build_parser([command])
    assert sub is not None
    return sub.parse_args([*_COMMANDS[command], *argv])


def _taking(flag: str) -> list[str]:
    commands = []
    for command in _COMMANDS:
        _, _, sub = _build_parser([command])
        assert sub is not None
        if flag in sub._option_string_actions:
            commands.append(command)
    return commands


@pytest.mark.parametrize("flag", sorted(SETTING_FLAGS))
def test_a_setting_flag_gives_the_config_set_gives(flag: str) -> None:
    key, _ = SETTING_FLAGS[flag]
    value = _VALUES[flag]
    commands = _taking(flag)
    assert commands, f"no command takes {flag}"
    for command in commands:
        by_flag = load_config(_parse(command, flag, value))
        by_set = load_config(_parse(command, "--set", f"{key}={value}"))
        assert by_flag == by_set != Config() and by_flag.given == by_set.given == {key}


def test_the_last_of_a_flag_and_set_wins() -> None:
    first = load_config(_parse("search", "--budget", "9000", "--set", "budget.total=8000"))
    last = load_config(_parse("search", "--set", "budget.total=8000", "--budget", "9000"))
    assert (first.budget.total, last.budget.total) == (8000, 9000)
    unset = load_config(_parse("search"))
    assert unset == Config() and not unset.given


def test_a_bad_flag_value_is_the_settings_error(tmp_path, capsys) -> None:
    code = main(["search", "q", "--index", str(tmp_path / "none"), "--budget", "lots"])
    err = capsys.readouterr().err
    assert code == 2 and "setting 'budget.total' expects int, got 'lots'" in err, err


def test_serve_reads_its_wall_time_from_the_config() -> None:
    from thresher.cli.serve_cmd import settings_from_args

    settings = settings_from_args(_parse("serve", "--wall-time", "12.5"))
    assert settings.config.episode.wall_time_s == 12.5
