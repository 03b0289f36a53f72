"""ascenv: make the Ascend NPU stack visible and repeatable."""

__version__ = "0.1.0"
