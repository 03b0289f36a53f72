"""ascenv: make the Ascend NPU stack visible and repeatable."""

__version__ = "0.1.0"


def require(**ranges: str) -> None:
    """Fail the import of a package whose stack this machine does not have, with the words of
    ``ascenv check``'s finding: ``ascenv.require(cann=">=8.5.0", torch_npu="~=2.8", who="mypkg")``.
    Reads files only and imports nothing of ascenv but ``ascenv.guard`` (standard library only)."""
    from ascenv.guard import require as check

    check(**ranges)
