#!/usr/bin/env python3
"""The guides' Swift code blocks, kept byte for byte in Examples/GuideCode.

Every Swift code block of the guides in ../shared/seeds is listed below by seed file and
line range. The check:

1. Each block has a committed copy, Examples/GuideCode/blocks/<id>.swift (so a clone without
   ../shared can still be checked). When ../shared/seeds exists, each copy must still equal
   its lines in the seed.
2. Each block appears in its guide's file under Examples/GuideCode/Sources/GuideCode between
   `// guide-block: <id>` and `// end guide-block: <id>`. Inside that region, lines ending
   in `// [wrapper]` are the example's own (a function opened around the block, a supplied
   variable); a block line that is only `...` (the guide's elision) may be replaced by such
   lines. Everything else must equal the block's lines exactly, after the typo fixes listed
   in TYPO_FIXES (the only edits, each a line the guide gets wrong whatever the SDK).

3. The main build compiles exactly these files as an app would see the SDK: every file of
   Examples/GuideCode/Sources/GuideCode is linked into Tests/HomeAPITests/GuideCode (the
   HomeAPI tests run them against simulated devices, importing only GoogleHomeSDK and
   GoogleHomeTypes), and the package exports both as products, as Examples/GuideCode names them.
   --app builds Examples/GuideCode itself, a package of its own that depends on this one by path
   (its own .build: the whole dependency tree again, about 6 minutes of 2 cores; the test
   command leaves that full form to `scripts/run guide-code-app`).

Usage: scripts/check-guide-code.py [--write-blocks] [--app]
  --write-blocks  (re)write the committed copies from ../shared/seeds first.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(os.path.dirname(ROOT), "shared", "seeds")
GUIDE = os.path.join(ROOT, "Examples", "GuideCode")
BLOCKS = os.path.join(GUIDE, "blocks")
SOURCES = os.path.join(GUIDE, "Sources", "GuideCode")
WRAPPER = "// [wrapper]"

DEVICE = "000_35b852925340ae42.txt"
STRUCTURE_TR = "001_4d1d5a1f3cd9b122.txt"
MONITORING = "002_0d1eb8bd985850c4.txt"
DISCOVERY = "003_000758a3dfb547e3.txt"
STRUCTURE = "004_c6c293003573dad6.txt"

# (id, seed, first line, last line, example file). Lines are 1-based and inclusive.
# Left out, not Swift: the SYNC response (JSON) in the Device guide and the Kotlin
# `val roomToDelete = …` lines (155-156) in both Structure guides.
STRUCTURE_RANGES = [(7, 7), (34, 46), (54, 56), (64, 72), (78, 82), (90, 101), (109, 122),
                    (130, 136), (142, 149), (160, 167), (175, 179), (185, 185)]
BLOCK_LIST = (
    [(f"device-{i:02}", DEVICE, a, b, "DeviceGuide.swift") for i, (a, b) in enumerate([
        (5, 6), (28, 29), (39, 59), (65, 67), (73, 80), (92, 98), (102, 106), (110, 114), (120, 127),
        (133, 142), (150, 157), (167, 184), (240, 248), (254, 256), (264, 266), (276, 278), (284, 285),
        (293, 293)], 1)]
    + [(f"structure-{i:02}", STRUCTURE, a, b, "StructureGuide.swift") for i, (a, b) in enumerate(STRUCTURE_RANGES, 1)]
    + [(f"structure-tr-{i:02}", STRUCTURE_TR, a, b, "StructureGuideTurkish.swift")
       for i, (a, b) in enumerate(STRUCTURE_RANGES, 1)]
    + [(f"monitoring-{i:02}", MONITORING, a, b, "MonitoringGuide.swift") for i, (a, b) in enumerate([
        (18, 21), (25, 25), (27, 27), (31, 38), (41, 50), (54, 61), (67, 74), (79, 85), (88, 98)], 1)]
    + [(f"discovery-{i:02}", DISCOVERY, a, b, "DiscoveryGuide.swift") for i, (a, b) in enumerate([
        (36, 90), (92, 154), (219, 236), (279, 301)], 1)]
)

# id -> [(guide line, line as compiled)]. Each is a mistake in the guide that no SDK accepts.
TYPO_FIXES = {
    # `=` for `==`, and the `)` closing `first(where:` is missing; `map`, not `compactMap`:
    # the sink below unwraps with `if let`, which needs the Optional that compactMap removes.
    "monitoring-04": [(".compactMap { $0.first(where: { $0.id = myStructureID} }",
                       ".map { $0.first(where: { $0.id == myStructureID}) }")],
    # `if let onOffState = onOffState` needs the Optional that compactMap removes.
    "monitoring-06": [(".compactMap { $0.matterTraits.onOffTrait }",
                       ".map { $0.matterTraits.onOffTrait }")],
    # The same, and the `{` opening the `if let` body is missing.
    "monitoring-07": [(".compactMap { $0.matterTraits.levelControlTrait }",
                       ".map { $0.matterTraits.levelControlTrait }"),
                      ("if let dimmableLightDevice = dimmableLightDevice",
                       "if let dimmableLightDevice = dimmableLightDevice {")],
}


def seed_lines(seed, first, last):
    with open(os.path.join(SEEDS, seed), encoding="utf-8") as f:
        lines = f.read().split("\n")
    return lines[first - 1:last]


LINKS = os.path.join(ROOT, "Tests", "HomeAPITests", "GuideCode")
PRODUCTS = ("GoogleHomeSDK", "GoogleHomeTypes")


def built_as_an_app():
    """Failures of point 3: the links and the products."""
    failures = []
    for name in sorted(os.listdir(SOURCES)):
        link = os.path.join(LINKS, name)
        if not os.path.islink(link) or os.path.realpath(link) != os.path.realpath(os.path.join(SOURCES, name)):
            failures.append(f"{os.path.relpath(link, ROOT)}: expected a link to Examples/GuideCode/Sources/GuideCode/{name}")
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
    products = {p["name"]: p["targets"] for p in manifest["products"]}
    for name in PRODUCTS:
        if products.get(name) != [name]:
            failures.append(f"Package.swift: expected a library product {name} of target {name}, found {products.get(name)}")
    return failures


def main():
    write = "--write-blocks" in sys.argv[1:]
    have_seeds = os.path.isdir(SEEDS)
    if write and not have_seeds:
        sys.exit(f"no seeds at {SEEDS}")
    if write:
        os.makedirs(BLOCKS, exist_ok=True)
        for block_id, seed, first, last, _ in BLOCK_LIST:
            with open(os.path.join(BLOCKS, block_id + ".swift"), "w", encoding="utf-8") as f:
                f.write("\n".join(seed_lines(seed, first, last)) + "\n")
    failures = []
    sources = {}
    for block_id, seed, first, last, example in BLOCK_LIST:
        copy_path = os.path.join(BLOCKS, block_id + ".swift")
        if not os.path.exists(copy_path):
            failures.append(f"{block_id}: no copy at {os.path.relpath(copy_path, ROOT)}")
            continue
        with open(copy_path, encoding="utf-8") as f:
            block = f.read().rstrip("\n").split("\n")
        if have_seeds and block != seed_lines(seed, first, last):
            failures.append(f"{block_id}: the copy no longer equals {seed} lines {first}-{last}")

        fixes = dict(TYPO_FIXES.get(block_id, []))
        for original in fixes:
            if original not in block:
                failures.append(f"{block_id}: typo fix for a line the block does not have: {original}")
        expected = [fixes.get(line, line) for line in block if line.strip() != "..."]

        if example not in sources:
            path = os.path.join(SOURCES, example)
            if not os.path.exists(path):
                failures.append(f"{block_id}: no {os.path.relpath(path, ROOT)}")
                continue
            with open(path, encoding="utf-8") as f:
                sources[example] = f.read().split("\n")
        lines = sources[example]
        begin, end = f"// guide-block: {block_id}", f"// end guide-block: {block_id}"
        starts = [i for i, line in enumerate(lines) if line.strip() == begin]
        ends = [i for i, line in enumerate(lines) if line.strip() == end]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            failures.append(f"{block_id}: {example} needs exactly one `{begin}` … `{end}` region")
            continue
        region = [line for line in lines[starts[0] + 1:ends[0]] if not line.rstrip().endswith(WRAPPER)]
        if region != expected:
            for n, (want, got) in enumerate(zip(expected + [""] * len(region), region + [""] * len(expected))):
                if want != got:
                    failures.append(f"{block_id}: {example} differs from the guide at block line {n + 1}:\n"
                                    f"    guide:   {want!r}\n    example: {got!r}")
                    break
    failures += built_as_an_app()
    if "--app" in sys.argv[1:] and not failures:
        print("building Examples/GuideCode as an app package (its own .build) ...", flush=True)
        if subprocess.run(["swift", "build", "--package-path", GUIDE], cwd=ROOT).returncode != 0:
            failures.append("Examples/GuideCode: swift build failed")
    for failure in failures:
        print("FAIL", failure)
    checked = "the seeds and " if have_seeds else "(no ../shared/seeds: copies only) "
    print(f"{len(BLOCK_LIST)} guide blocks checked against {checked}Examples/GuideCode, its "
          f"{len(os.listdir(SOURCES))} files linked into the HomeAPI tests, the SDK's products"
          f"{', and built as an app' if '--app' in sys.argv[1:] else ''}: "
          f"{'OK' if not failures else f'{len(failures)} failure(s)'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
