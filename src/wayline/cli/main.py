"""The ``wayline`` command line: a click group whose subcommands import lazily.

Heavy modules (openai, opentelemetry, the relay exporters) load only when the
subcommand that needs them runs, so ``wayline --help`` and ``wayline plugins
list`` start fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

# name -> "module:attribute" of a click.Command; imported on first use.
_COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("wayline.cli.chat", "chat"),
    "demo": ("wayline.cli.demo", "demo"),
    "plugins": ("wayline.cli.plugins_cmd", "plugins"),
    "serve-model": ("wayline.cli.serve", "serve_model"),
    "atif": ("wayline.cli.atif_cmd", "atif"),
    "atof": ("wayline.cli.atif_cmd", "atof"),
    "view": ("wayline.cli.view", "view"),
    "replay": ("wayline.cli.replay_cmd", "replay"),
    "diff": ("wayline.cli.replay_cmd", "diff"),
    "export": ("wayline.cli.replay_cmd", "export"),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module = importlib.import_module(target[0])
        command = getattr(module, target[1])
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup)
@click.version_option(package_name="wayline")
def cli() -> None:
    """wayline: an LLM agent runtime whose every step is observable and interceptable."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    return cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="wayline")


if __name__ == "__main__":  # pragma: no cover
    main()
