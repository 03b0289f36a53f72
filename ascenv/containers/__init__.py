"""Pinned build images: recipes (``containers/<name>/image.toml``), pins (``containers/pins.toml``),
the offline Debian bootstrap, and the container engine behind one small interface.

Every image and container ascenv creates carries labels under ``LABEL_PREFIX`` so that
``clean-cache`` and the tests can find exactly ascenv's own, and nothing else.
"""

from __future__ import annotations

LABEL_PREFIX = "ascenv."
MANAGED_LABEL = "ascenv.managed"  # present (value "true") on everything ascenv creates
RECIPE_LABEL = "ascenv.recipe"  # the recipe name an image was built from
