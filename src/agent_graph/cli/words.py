"""Command-line words without click: peeking at argv, and commands printed as hints.

Kept apart from :mod:`.options` (click's option declarations) so that the fast path of
``agc evaluate`` (:mod:`.fast`) can use them without importing click.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

#: The usage error for ``--format`` without a value (``agc validate --format``).
FORMAT_MISSING = "Option '--format' requires a value: human or json"


def format_from_argv(argv: Sequence[str]) -> str:
    """Peek at ``--format`` before click parses, so usage errors can honour it.

    The last ``--format`` given a value wins, as it does when click parses (a
    subcommand's option overrides the group's); ``human`` when there is none. An
    option right after ``--format`` is not its value (:func:`_check_format`).
    """
    found = "human"
    for index, arg in enumerate(argv):
        if arg == "--format" and index + 1 < len(argv):
            if not argv[index + 1].startswith("-"):
                found = argv[index + 1]
        elif arg.startswith("--format="):
            found = arg.split("=", 1)[1]
    return found


def manifest_bases(argv: Sequence[str]) -> list[str]:
    """Directories diagnostics may be relative to (for caret excerpts in error output)."""
    for index, arg in enumerate(argv):
        given = None
        if arg in ("-m", "--manifest") and index + 1 < len(argv):
            given = argv[index + 1]
        elif arg.startswith("--manifest="):
            given = arg.split("=", 1)[1]
        if given is not None:
            return [manifest_base(given)]
    return []


def manifest_base(given: str) -> str:
    """The absolute directory a ``-m`` value names: itself when it is one (``-m DIR`` means
    ``DIR/provider.yaml``), else the manifest file's folder."""
    path = os.path.abspath(given)
    return path if os.path.isdir(path) else os.path.dirname(path)


def shell_command(words: Iterable[str]) -> str:
    """Words as one command line that a POSIX shell runs as printed (each quoted by shlex)."""
    import shlex  # only for a printed hint

    return " ".join(shlex.quote(word) for word in words)


def provider_words(manifest: str | None, skill: str | None, registry: str | None) -> list[str]:
    """The Provider options to repeat in a printed command, with absolute paths.

    ``--skill`` wins over ``-m`` (as when the Provider is loaded). Nothing when neither
    was given: the default ``./provider.yaml`` served, and a printed command runs in the
    same working directory.
    """
    words: list[str] = []
    if skill:
        words += ["--skill", os.path.abspath(skill)]
    elif manifest:
        words += ["-m", os.path.abspath(manifest)]
    if registry:
        words += ["--registry", os.path.abspath(registry)]
    return words
