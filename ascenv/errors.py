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
EXIT_ENGINE_SDK_MISSING = 4  # the docker Python SDK is not installed
EXIT_ENGINE_UNREACHABLE = 5  # no Docker engine answers on the configured socket
EXIT_ENGINE_PERMISSION = 6  # the engine socket exists but the caller may not use it
EXIT_ENGINE_TOO_OLD = 7  # the engine answers but its API is older than ascenv needs
EXIT_BUILD_FAILED = 8  # a build command failed inside its container
EXIT_NOT_REPRODUCIBLE = 9  # two builds of the same inputs gave different bytes
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


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


class DataFileError(InputError):
    """A shipped or user data file (compat/*.toml, containers/*.toml) fails validation.

    The message always names the file and the key path, e.g.
    ``compat/torch_npu.toml: releases[12].cann: expected string``.
    """


class PlatformMismatch(InputError):
    """A lock or pin was written for another platform (arch or SoC family)."""


class EngineError(AscenvError):
    """Base of the container-engine failures; each subclass has its own exit code."""


class EngineSdkMissing(EngineError):
    exit_code = EXIT_ENGINE_SDK_MISSING


class EngineUnreachable(EngineError):
    exit_code = EXIT_ENGINE_UNREACHABLE


class EnginePermissionDenied(EngineError):
    exit_code = EXIT_ENGINE_PERMISSION


class EngineTooOld(EngineError):
    exit_code = EXIT_ENGINE_TOO_OLD


class BuildFailed(AscenvError):
    exit_code = EXIT_BUILD_FAILED


class NotReproducible(AscenvError):
    exit_code = EXIT_NOT_REPRODUCIBLE
