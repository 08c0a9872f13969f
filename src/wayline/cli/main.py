"""The ``wayline`` command line: a click group whose subcommands import lazily.

Heavy modules (openai, opentelemetry, the relay exporters) load only when the
subcommand that needs them runs, so ``wayline --help`` and ``wayline plugins
list`` start fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from wayline.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, fail

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
    "sessions": ("wayline.cli.sessions_cmd", "sessions"),
    "import": ("wayline.cli.import_cmd", "import_"),
    "serve": ("wayline.cli.serve_cmd", "serve"),
    "mcp": ("wayline.cli.mcp_cmd", "mcp"),
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

    def main(  # type: ignore[override]
        self,
        args: list[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's main, with click's own errors in wayline's form: ``error:`` on stderr.

        Usage errors keep click's usage and help hint lines before the one ``error:`` line.
        """
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.format_message(), err=True)  # a bare group prints its help
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            if exc.ctx is not None:
                click.echo(exc.ctx.get_usage(), err=True)
                hint = exc.ctx.help_option_names[0] if exc.ctx.help_option_names else "--help"
                click.echo(f"Try '{exc.ctx.command_path} {hint}' for help.", err=True)
            fail(exc.format_message(), exc.exit_code)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            fail("interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            # The reader went away (``wayline … | head``): stop quietly, as a pipeline expects.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_FAILED)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; an exception no command handled is one ``error:`` line, exit 1.

        Commands report bad input themselves (exit 2); this is the last guard, so a bug never
        shows a user a traceback. ``WAYLINE_DEBUG=1`` lets the traceback through.
        """
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            raise
        except Exception as exc:
            if os.environ.get("WAYLINE_DEBUG") == "1":
                raise
            fail(f"internal error: {type(exc).__name__}: {_first_line(exc)}", EXIT_FAILED)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


@click.group(cls=_LazyGroup)
@click.version_option(package_name="wayline")
def cli() -> None:
    """wayline: an LLM agent runtime whose every step is observable and interceptable."""


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    return cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="wayline")


if __name__ == "__main__":  # pragma: no cover
    main()
