"""The command line's manners: every subcommand gets a description, an example in its
epilog, and help for the options many commands share."""

from __future__ import annotations

import argparse

from taskqueue.store.states import Status

STATUSES = ", ".join(s.value for s in Status)

# Help for options whose meaning is the same in every command that has them.
SHARED_HELP = {
    "json": "print JSON instead of text",
    "id": "the task's id",
    "capability": "the capability's name",
    "worker": "the worker's name, as given to `signoff claim`",
    "config": "config file (default $SIGNOFF_CONFIG)",
}

# One example per command, by its words after `signoff`.
EXAMPLES = {
    "migrate": "signoff migrate",
    "enqueue": "signoff enqueue greet --payload '{\"name\": \"Ada\"}'",
    "claim": "signoff claim greet --worker w1 --lease 60",
    "heartbeat": "signoff heartbeat 42 --worker w1 --lease 60",
    "release": "signoff release 42 --worker w1 --delay 300",
    "park": "signoff park 42 --worker w1 --question 'Send this greeting?'",
    "complete": "signoff complete 42 --worker w1 --result '\"sent\"'",
    "fail": "signoff fail 42 --worker w1 --error 'mail server down'",
    "approve": "signoff approve 42 --by ada",
    "skip": "signoff skip 42 --by ada --note 'not this week'",
    "revise": "signoff revise 42 --by ada --note 'shorter, please'",
    "retry": "signoff retry 42 --by ada",
    "cancel": "signoff cancel 42 --by ada",
    "reap": "signoff reap --orphan-after 3600 --json",
    "signals": "signoff signals --json",
    "ls": "signoff ls --status needs_approval --capability greet",
    "show": "signoff show 42 --json",
    "caps": "signoff caps ls",
    "caps ls": "signoff caps ls --json",
    "worker": "signoff worker --config signoff.toml --capability greet",
    "stats": "signoff stats greet --json",
    "produce": "signoff produce greet daily --dry-run",
    "prune": "signoff prune --older-than 30 --json",
    "attachment": "signoff attachment ls 42",
    "attachment ls": "signoff attachment ls 42 --json",
    "attachment get": "signoff attachment get 42 cv.pdf -o -",
    "embedded": "signoff embedded status",
    "embedded stop": "signoff embedded stop",
    "embedded status": "signoff embedded status --json",
    "completion": "signoff completion bash > ~/.local/share/bash-completion/completions/signoff",
    "init": "signoff init mywork-project && cd mywork-project && signoff worker "
            "--config signoff.toml --capability greet",
}


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    """Every (sub)command under `parser`: its words, its parser and its one-line help."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for name, child in action.choices.items():
                found.append(((*path, name), child, helps.get(name)))
                found.extend(subcommands(child, (*path, name)))
    return found


def finish(parser: argparse.ArgumentParser) -> None:
    """Fill in what a command left out: its description (its one-line help), an example,
    and help for the shared options."""
    for words, child, help_ in subcommands(parser):
        if child.description is None and help_:
            child.description = help_[0].upper() + help_[1:] + "."
        example = EXAMPLES.get(" ".join(words))
        if not child.epilog and example:
            child.epilog = f"example: {example}"
        for action in child._actions:
            if action.help is None and isinstance(action, argparse._SubParsersAction):
                action.help = "what to do: " + ", ".join(action.choices)
            if action.help is None and action.dest in SHARED_HELP:
                action.help = SHARED_HELP[action.dest]
