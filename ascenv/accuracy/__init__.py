"""``ascenv test``: an operator build's output compared with a reference under tolerances."""
