"""Build, list, verify and pin the container images that operator builds run in.

Images are declared in containers/<name>/image.toml and pinned in containers/pins.toml: a Debian
bootstrap by its image ID (a pure function of its files), a registry image by its digest.
`build` reuses a present image equal to its pin (a digest check), `verify` compares without
building, `pin` is the only way a pin changes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv import errors, paths
from ascenv.commands import _common as common
from ascenv.containers import engine as engine_mod
from ascenv.containers import images
from ascenv.containers.pins import PINS_FILE, load_pins, save_pins
from ascenv.containers.recipe import load_recipe, recipe_names
from ascenv.signals import termination_as_interrupt

NAME = "image"
ORDER = 60
HELP = "build, list, verify and pin the pinned build containers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="image_command", metavar="ACTION", required=True)
    for action, text, needs_name in (
        ("build", "build (or pull) an image and load it into the engine; reuse it when it equals its pin", True),
        ("ls", "list the images with their state: ok, drifted, missing or unpinned", False),
        ("verify", "check that the present image equals its pin; name the packages that differ", True),
        ("pin", "record the image's ID or digest and package versions in pins.toml", True),
    ):
        p = sub.add_parser(action, help=text, description=text)
        if needs_name:
            p.add_argument("name", metavar="NAME", help="an image under containers/ (see `ascenv image ls`)")
        if action == "build":
            p.add_argument("--force", action="store_true", help="bootstrap again even when the pinned image is present")
            p.add_argument(
                "--save",
                metavar="FILE",
                help="also keep the image archive (docker load -i FILE on an air-gapped machine)",
            )
        p.add_argument("--containers", metavar="DIR", help="the recipes directory (default: ascenv's containers/)")
        p.add_argument(
            "--pins",
            metavar="FILE",
            help="the pins file this image's pin is read from (and `pin` writes to); "
            "default: pins.toml in the recipes directory",
        )
        common.add_format_option(p)


@termination_as_interrupt()  # SIGTERM unwinds like Ctrl-C: staging dirs and containers are removed
def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import image as render

    directory = Path(ctx.cwd, args.containers) if args.containers else paths.data_dir("containers")
    pins_path = Path(ctx.cwd, args.pins) if args.pins else directory / PINS_FILE
    pins = load_pins(pins_path)

    if args.image_command == "ls":
        recipes = [load_recipe(directory, n) for n in recipe_names(directory)]
        engine = engine_mod.connect(ctx.environ)
        statuses = tuple(images.status(r, pins.get(r.name), engine) for r in recipes)
        render.render_ls(ctx.out, statuses, args.format)
        return errors.EXIT_OK

    recipe = load_recipe(directory, args.name)
    pin = pins.get(recipe.name)
    if args.image_command == "build":
        images.require_pin(recipe, pin)  # refuse before asking anything of the engine
    engine = engine_mod.connect(ctx.environ)

    if args.image_command == "verify":
        if pin is not None and pin.architecture != engine.arch:
            raise errors.PlatformMismatch(
                f"{recipe.name} is pinned for {pin.architecture}; this engine runs {engine.arch}"
            )
        state = images.status(recipe, pin, engine)
        render.render_verify(ctx.out, state, args.format)
        return errors.EXIT_OK if state.state == images.OK else errors.EXIT_FINDINGS

    host = common.image_host(ctx)
    if args.image_command == "build":
        save = Path(ctx.cwd, args.save) if args.save else None
        outcome = images.build(recipe, pin, engine, host, force=args.force, save=save)
        render.render_build(ctx.out, outcome, args.format)
        images.check_against_pin(recipe, pin, outcome)
        return errors.EXIT_OK

    new_pin = images.make_pin(recipe, engine, host)
    pins[recipe.name] = new_pin
    save_pins(pins_path, pins)
    render.render_pinned(ctx.out, recipe.name, new_pin, pins_path, args.format)
    return errors.EXIT_OK
