"""Per-shape performance baselines beside the builds: read what Ascend's profilers write
(``readers``), fold launches into records (``records``), key runs by the stack they ran on
(``fingerprint``), judge a change against the noise (``stats``) and keep runs in the build store
(``store``)."""
