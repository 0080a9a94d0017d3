"""``loopc completion bash|zsh|fish``: print the shell completion script
(click's shell completion; docs/ci.md#shell-completion).

The script calls ``loopc`` back with ``_LOOPC_COMPLETE`` set, so it
completes commands, options, choices and paths of the installed loopc;
``eval "$(loopc completion bash)"`` in ``~/.bashrc`` enables it (zsh:
``~/.zshrc``; fish: ``loopc completion fish | source`` in
``~/.config/fish/config.fish``).  Exit 0; an unknown shell is a usage
error (2).
"""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")
#: the environment variable click's completion scripts set when calling back
COMPLETE_VAR = "_LOOPC_COMPLETE"


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_cmd(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish); see docs/ci.md#shell-completion."""
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command
    cls = get_completion_class(shell)
    assert cls is not None  # every name in SHELLS is one of click's
    click.echo(cls(root, {}, "loopc", COMPLETE_VAR).source())


def register(group: click.Group) -> None:
    """Add ``completion`` to the ``loopc`` group."""
    group.add_command(completion_cmd)
