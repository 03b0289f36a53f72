"""`ascenv image` for builder-bookworm: a bootstrap from scratch (empty .deb cache), a bootstrap
with the .deb cache warm, and what a present, pinned image costs (`verify`, and `build` reusing it):
that must be a digest lookup, near zero next to a bootstrap. Prints the image size too.

    .venv/bin/python bench/bench_image.py [--repeat 20]

Needs root, mmdebstrap, unshare, a Docker engine and the host's Debian mirror. Builds into a
temporary cache directory; the image stays loaded (tagged ascenv/builder-bookworm:<id>).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv import __version__  # noqa: E402
from ascenv.containers import images  # noqa: E402
from ascenv.containers.engine import connect  # noqa: E402
from ascenv.containers.recipe import load_recipe  # noqa: E402

NAME = "builder-bookworm"
VERIFY_RATIO = 0.01  # verify must cost under 1% of a bootstrap


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed runs of verify and of the reusing build")
    args = parser.parse_args()
    engine = connect(dict(os.environ))
    recipe = load_recipe(ROOT / "containers", NAME)
    with tempfile.TemporaryDirectory(prefix="bench-image-") as tmp:
        host = images.Host(environ=dict(os.environ), cache=Path(tmp))
        cold = images.build(recipe, None, engine, host)  # empty .deb cache: downloads everything
        warm = images.build(recipe, None, engine, host)  # same recipe, .debs from the cache
    assert cold.image_id == warm.image_id, f"not reproducible: {cold.image_id} != {warm.image_id}"
    pin = images.make_pin(recipe, engine, host)
    verify_s, reuse_s = [], []
    for _ in range(args.repeat):
        start = time.monotonic()
        state = images.status(recipe, pin, engine)
        verify_s.append(time.monotonic() - start)
        assert state.state == images.OK
        start = time.monotonic()
        reused = images.build(recipe, pin, engine, host)
        reuse_s.append(time.monotonic() - start)
        assert reused.reused
    verify, reuse = statistics.median(verify_s), statistics.median(reuse_s)
    result = {
        "ascenv": __version__,
        "image_id": cold.image_id,
        "packages": len(cold.packages),
        "image_size_mb": round(cold.size / 1e6, 1),
        "bootstrap_cold_s": round(cold.seconds, 2),
        "bootstrap_warm_debs_s": round(warm.seconds, 2),
        "verify_median_s": round(verify, 4),
        "build_reusing_median_s": round(reuse, 4),
        "verify_over_bootstrap": round(verify / cold.seconds, 5),
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_image.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"image {NAME} {cold.image_id}: {result['image_size_mb']} MB, {len(cold.packages)} packages")
    print(f"bootstrap from scratch        {cold.seconds:8.2f} s")
    print(f"bootstrap, .deb cache warm    {warm.seconds:8.2f} s  (same image ID)")
    print(f"verify, present and pinned    {verify:8.4f} s  (median of {args.repeat})")
    print(f"build, present and pinned     {reuse:8.4f} s  (reused, nothing built)")
    ratio = verify / cold.seconds
    print(
        f"verify / bootstrap = {ratio:.5f}  (budget {VERIFY_RATIO})  {'ok' if ratio <= VERIFY_RATIO else 'OVER BUDGET'}"
    )
    return 0 if ratio <= VERIFY_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
