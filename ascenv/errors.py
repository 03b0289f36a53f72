"""The one error hierarchy and the one exit-code table.

Every failure a user can meet is an ``AscenvError`` subclass carrying its exit code and a hint
(what to do next). ``ascenv.cli.main`` is the only place that catches them.
"""

from __future__ import annotations

from typing import Optional

# The exit-code table. Documented in README.md ("Exit codes"); tests/test_cli.py checks both agree.
EXIT_OK = 0
EXIT_FINDINGS = 1  # doctor found errors, lock --check found drift, verify found a difference
EXIT_USAGE = 2  # bad arguments, unreadable or invalid input file, lock for another platform
EXIT_INTERNAL = 3  # a bug in ascenv: please report it
EXIT_TOOL_MISSING = 4  # a tool ascenv needs is missing: the docker Python SDK, mmdebstrap, unshare, dpkg
EXIT_ENGINE_UNREACHABLE = 5  # no Docker engine answers on the configured socket
EXIT_ENGINE_PERMISSION = 6  # the engine socket exists but the caller may not use it
EXIT_ENGINE_TOO_OLD = 7  # the engine answers but its API is older than ascenv needs
EXIT_BUILD_FAILED = 8  # a build command failed in its container; an image bootstrap or a package install failed
EXIT_NOT_REPRODUCIBLE = 9  # two builds of the same inputs (operator or image) gave different bytes
EXIT_IMAGE_UNAVAILABLE = 10  # a pinned image is absent and not fetched (--no-fetch, registry down)
EXIT_NODES_FAILED = 11  # fleet audit: some nodes were unreachable or their snapshot failed
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_STDOUT_CLOSED = 141  # the reader of standard output went away (`| head`): 128 + SIGPIPE, as git or cat


class AscenvError(Exception):
    """A failure with a message for the user, a hint, and an exit code."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str, *, hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(AscenvError):
    """The command line asks for something that cannot be done as asked."""

    exit_code = EXIT_USAGE


class InputError(AscenvError):
    """An input file (snapshot, lock, recipe) is missing, unreadable or malformed."""

    exit_code = EXIT_USAGE


class SchemaError(InputError):
    """Plain data does not fit the expected shape; ``path`` names the offending key."""

    def __init__(self, path: str, problem: str) -> None:
        # a key read from the file may hold a lone surrogate: escape it so the message prints
        path = path.encode("utf-8", "backslashreplace").decode("utf-8")
        problem = problem.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(f"{path or '<top>'}: {problem}")
        self.path = path
        self.problem = problem


class InvalidVersion(InputError):
    """A version string that cannot be parsed; the message quotes it."""


class IncomparableVersions(AscenvError, TypeError):
    """Two versions of different product lines were ordered; that is a bug in the caller (exit 3)."""


class DataFileError(InputError):
    """A shipped or user data file (compat/*.toml, containers/*.toml) fails validation.

    The message always names the file and the key path, e.g.
    ``compat/torch_npu.toml: releases[12].cann: expected string``.
    """


class PlatformMismatch(InputError):
    """A lock or pin was written for another platform (arch or SoC family)."""


class Unpinned(UsageError):
    """An image has no pin (no ID, no registry digest); ascenv never builds from a guess."""


class ToolMissing(AscenvError):
    """A program ascenv needs for this command is not installed (mmdebstrap, unshare, dpkg)."""

    exit_code = EXIT_TOOL_MISSING


class EngineError(AscenvError):
    """Base of the container-engine failures; each subclass has its own exit code."""


class EngineSdkMissing(EngineError):
    exit_code = EXIT_TOOL_MISSING


class EngineUnreachable(EngineError):
    exit_code = EXIT_ENGINE_UNREACHABLE


class EnginePermissionDenied(EngineError):
    exit_code = EXIT_ENGINE_PERMISSION


class EngineTooOld(EngineError):
    exit_code = EXIT_ENGINE_TOO_OLD


class ImageNotAvailable(AscenvError):
    """A pinned image is absent from the engine and was not fetched: ``--no-fetch``, or its
    registry does not answer (the hint then says how to ``docker save``/``docker load`` it)."""

    exit_code = EXIT_IMAGE_UNAVAILABLE


class BuildFailed(AscenvError):
    """A build command failed (or timed out) in its container."""

    exit_code = EXIT_BUILD_FAILED


class BootstrapFailed(BuildFailed):
    """mmdebstrap (or loading its image into the engine) failed; the message carries its output."""


class InstallFailed(BuildFailed):
    """A package's own installer failed, or did not install what it said."""


class NotReproducible(AscenvError):
    """Two builds of the same inputs differ: an operator built twice, or an image bootstrapped
    again from an unchanged recipe that is not the pinned one."""

    exit_code = EXIT_NOT_REPRODUCIBLE


class PinMismatch(AscenvError):
    """An image bootstrapped from a recipe edited since its pin differs from the pin: drift."""

    exit_code = EXIT_FINDINGS


class ElfError(InputError):
    """A file that starts like an ELF file has a structure cut short or out of range (ascenv.elf)."""


class PackageError(InputError):
    """An operator package (a makeself ``.run``) that cannot be read as one: truncated, a
    checksum that does not match its payload, a tar stream that ends early, or past the limits."""


class FleetSplit(AscenvError):
    """`fleet lock`: no stack is shared by more than half of the reachable nodes (the fleet drifts)."""

    exit_code = EXIT_FINDINGS


class NodesFailed(AscenvError):
    """`fleet audit`: some nodes were unreachable or their snapshot failed; raised after the
    report of all the nodes is printed."""

    exit_code = EXIT_NODES_FAILED


class OutputClosed(AscenvError):
    """The reader of standard output went away (``ascenv doctor | head -1``): ascenv stops quietly
    with the code of a program killed by SIGPIPE."""

    exit_code = EXIT_STDOUT_CLOSED


class OutputFailed(UsageError):
    """Standard output cannot be written: a full disk, ``/dev/full``, an I/O error, a closed descriptor."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived during work that must clean up: handled as Ctrl-C is (exit 130)."""
