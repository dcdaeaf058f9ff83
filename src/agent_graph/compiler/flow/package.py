"""Flow packages and their closure (docs/flows.md §A package, §1, B.1–B.4, C.21–C.23).

An entry is a package directory or a file named exactly ``FLOW.md``; the id is the
real package directory's name. ``执行Flow`` targets are siblings, loaded from the
parent directory of the referring package's real root, depth first with an explicit
stack (a chain of 500 packages is no deeper for Python than one), each package once
(a diamond loads its bottom once), and a target already on the loading stack is a
cycle, self-reference included.
"""

from __future__ import annotations

import os
import posixpath

from ... import codes
from ...documents.files import read_text
from ...documents.fingerprint import unhashable_files
from ...errors import AgentGraphError, Diagnostic
from ...frozen import field, slotted
from .document import Document, read_document
from .findings import Findings
from .resources import PackageFiles, is_file
from .structure import REF, Structure, check_structure, reuse_first

# for the type checker only: checking a package directory never loads pathlib (tests/cli)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import PurePath

ENTRY_FILE = "FLOW.md"

# Paths here are strings: checking never makes a Path, so a cold agc flow check of a
# package directory does not import pathlib (with urllib.parse and ipaddress, which it
# imports, 4 ms of CPU of about 35). Lowering and the runtime make their own Paths.


@slotted
class Package:
    """One loaded package: where it is, what it says, and what was found in it."""

    id: str
    root: str  # real path of the package directory
    display: str  # its FLOW.md as diagnostics show it
    findings: Findings
    document: Document | None = None
    structure: Structure | None = None
    is_child: bool = False


@slotted
class Closure:
    """The entry package and every package it reaches, in load order (entry first)."""

    base: str  # real parent directory of the entry package
    packages: dict[str, Package] = field(default_factory=dict)

    @property
    def root(self) -> Package:
        return next(iter(self.packages.values()))

    def diagnostics(self) -> list[Diagnostic]:
        """Every finding: the entry's file first, then each child's, each in file order."""
        return [d for package in self.packages.values() for d in package.findings.ordered()]


def entry_root(path: str | os.PathLike[str]) -> str:
    """The real package directory of an entry (``flow-entry-invalid`` / ``flow-entry-missing``)."""
    shown = os.fspath(path)
    try:
        return _entry_root(shown)
    except OSError as error:  # a path the system refuses (too long …): no entry is there
        reason = error.strerror or str(error)
        raise _entry_error(codes.FLOW_ENTRY_MISSING, f"{shown}: {reason}", shown) from None


def _entry_root(given: str) -> str:
    """On strings: the repository's 115 small packages took 2.8 ms here with a Path per
    step, 2.2 ms so (realpath is 1.2 of it)."""
    if os.path.isdir(given or os.curdir):  # "" is the current directory, as Path("") is
        root = given or os.curdir
    elif (written := _written(given)).name == ENTRY_FILE:  # its parent as written, not b/.. as b
        root = os.fspath(written.parent)
        if not os.path.exists(given):
            raise _entry_error(codes.FLOW_ENTRY_MISSING, f"{given} does not exist", given)
    elif os.path.exists(given):
        raise _entry_error(
            codes.FLOW_ENTRY_INVALID,
            f"{given} is not a Flow entry: give a package directory or its FLOW.md",
            given,
        )
    else:
        raise _entry_error(codes.FLOW_ENTRY_MISSING, f"{given} does not exist", given)
    real = os.path.realpath(root)
    if not os.path.isfile(os.path.join(real, ENTRY_FILE)):
        raise _entry_error(
            codes.FLOW_ENTRY_MISSING,
            f"{given} has no FLOW.md file (a package directory holds one, at its top)",
            given,
        )
    return real


def _written(given: str) -> PurePath:
    """``given`` as a path is spelled (its name and parent as :class:`~pathlib.PurePath`
    reads them): an entry that is not a directory, where pathlib is worth its import."""
    from pathlib import PurePath

    return PurePath(given)


def _entry_error(code: str, message: str, shown: str) -> AgentGraphError:
    return AgentGraphError(code, message, [Diagnostic(code, message, "error", shown)])


def read_package(root: str, base: str, flow_id: str, *, child: bool) -> Package:
    """The package at ``root`` with its FLOW.md read and scanned (Markdown, then its graph)."""
    entry = os.path.join(root, ENTRY_FILE)
    if os.path.dirname(root) == base:  # no relpath (0.9 of 32 ms, 115 packages)
        display = f"{os.path.basename(root)}/{ENTRY_FILE}"
    else:
        display = os.path.relpath(entry, base).replace(os.sep, "/")
    findings = Findings(display, flow_id, f"{flow_id}: " if child else "")
    package = Package(flow_id, root, display, findings, is_child=child)
    try:
        text = read_text(entry, display=display)
    except AgentGraphError as error:
        found = error.diagnostics[0] if error.diagnostics else None
        code = codes.FLOW_ENCODING_INVALID if error.code == codes.PARSE_FAILED else error.code
        line = found.line if found is not None else None
        column = found.column if found is not None else None
        findings.error(code, error.message.replace(entry, display), line, column)
        return package
    package.document = read_document(text.removeprefix("\ufeff"), findings)
    return package


def check_package(package: Package, strict: bool) -> None:
    """Appendix A on a scanned package (nothing to check when its FLOW.md was unreadable),
    and its files against what the fingerprint can hash."""
    if package.document is None:
        return
    findings = package.findings
    check_fingerprinted(package)
    package.structure = check_structure(
        package.document, PackageFiles(package.root), findings, strict
    )
    readable = package.id.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if readable != package.id:
        # the id goes into the compiled program and every Run record, which are UTF-8
        findings.error(
            codes.FLOW_ENTRY_INVALID,
            f"the package directory's name '{readable}' is not UTF-8 text; a Flow's id is "
            "its directory name: rename the directory",
        )
    elif not REF.match(package.id):
        findings.warning(
            codes.FLOW_ID_NOT_REFERENCEABLE,
            f"package directory {package.id!r} is a valid Flow to run, but 执行Flow cannot "
            "name it (ids start with a letter and hold letters, digits, - and _)",
        )


def check_fingerprinted(package: Package) -> None:
    """A file under references/ or scripts/ over the fingerprint's caps, or unreadable,
    is an error at that file, not a warning: resume trusts the fingerprint to notice a
    changed file (C.4), so a Run must not start on files it does not cover, and those
    directories hold Markdown and source code, never anything that large."""
    folder = posixpath.dirname(package.display)
    for problem in unhashable_files(package.root):
        if problem.path == ENTRY_FILE:
            continue  # read (and refused when too large) with the rest of FLOW.md
        shown = posixpath.join(folder, problem.path)
        package.findings.file_error(
            problem.code,
            f"{problem.path} cannot be part of the package's fingerprint: {problem.reason}",
            shown,
        )


def load_children(closure: Closure, strict: bool) -> None:
    """Read and check every package the entry reaches through 执行Flow, depth first."""
    first = closure.root
    # Frames: (package, index of its next call); the ids on the stack form the chain.
    stack: list[tuple[Package, int]] = [(first, 0)]
    chain = [first.id]
    while stack:
        package, position = stack.pop()
        calls = package.structure.calls if package.structure is not None else []
        if position >= len(calls):
            chain.pop()
            continue
        stack.append((package, position + 1))
        call = calls[position]
        target = str(call.flow)
        if target in chain:
            loop = " → ".join([*chain[chain.index(target) :], target])
            package.findings.error(
                codes.FLOW_REF_CYCLE, f"执行Flow {target!r} closes a cycle: {loop}", *call.flow_at
            )
            continue
        if target in closure.packages:
            continue  # a diamond: loaded (and checked) once
        child_root = os.path.join(os.path.dirname(package.root), target)
        try:
            found = is_file(os.path.join(child_root, ENTRY_FILE))
            reason = ""
        except OSError as error:  # a path the system refuses (too long …): none is there
            found, reason = False, f" ({error.strerror or error})"
        if not found:
            package.findings.error(
                codes.FLOW_REF_TARGET_MISSING,
                f"执行Flow {target!r}: no sibling package {target}/FLOW.md next to "
                f"{package.id}{reason}",
                *call.flow_at,
            )
            continue
        real = os.path.realpath(child_root)
        child = read_package(real, closure.base, target, child=True)
        check_package(child, strict)
        closure.packages[child.id] = child
        if strict and child.structure is not None:
            # a lint (C.7): lenient checking lifts it, and a Run that meets the 复用Agent
            # fails there with agent_binding
            reuse_first(child.structure, child.findings)
        stack.append((child, 0))
        chain.append(child.id)
