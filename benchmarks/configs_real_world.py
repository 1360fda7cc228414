"""dllint over the config files that PyPI packages ship (YAML and Python dict configs).

Downloads pinned wheels/sdists with ``pip download --no-deps`` into a temporary directory
(nothing lands in the checkout), unpacks them, and lints every ``*.yaml``/``*.yml`` file and
every ``.py`` file under a ``configs`` directory with all rules selected. Prints each finding
and a table of counts per package; the judged findings are in ``benchmarks/REAL_WORLD.md``
("Config files").

    python benchmarks/configs_real_world.py [--keep DIR] [--max-workers N]

``--max-workers`` defaults to 16, RULES.md's default for DL202 (per-GPU counts of 10-16 are
common on large machines).
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

PACKAGES = (
    "mmdet==3.3.0",
    "mmpretrain==1.2.0",
    "mmsegmentation==1.2.2",
    "mmpose==1.3.2",
    "mmaction2==1.2.0",
    "mmocr==1.0.1",
    "super-gradients==3.7.1",
    "anomalib==0.7.0",
    "sam2==1.1.0",
    "lightly==1.6.0",
    "torchtune==0.6.1",
)


def fetch(directory: Path) -> list[Path]:
    downloads = directory / "downloads"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation", "-q", "-d", str(downloads), *PACKAGES],
        check=True,
    )
    roots = []
    for archive in sorted(downloads.iterdir()):
        target = directory / "unpacked" / archive.name.split("-")[0]
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as opened:
                opened.extractall(target)
        else:
            with tarfile.open(archive) as opened:
                opened.extractall(target, filter="data")
        roots.append(target)
    return roots


def config_files(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
    files += [p for p in root.rglob("*.py") if "configs" in p.parts]
    return sorted(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="download and unpack here instead of a temporary directory")
    parser.add_argument("--max-workers", type=int, default=16)
    args = parser.parse_args()
    from dllint.config import Settings
    from dllint.engine import Linter
    from dllint.per_file import lint

    linter = Linter(Settings(select=("ALL",), max_workers=args.max_workers))
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(args.keep or temporary)
        roots = fetch(directory) if not (directory / "unpacked").is_dir() else sorted((directory / "unpacked").iterdir())
        table = []
        for root in roots:
            files = config_files(root)
            counts: collections.Counter[str] = collections.Counter()
            parsed = 0
            started = time.perf_counter()
            for path in files:
                result = lint(linter, str(path), path.read_bytes())  # through the input adapters
                parsed += not result.skipped
                for error in result.errors:
                    print(f"INTERNAL ERROR {error}")
                for finding in result.findings:
                    counts[finding.code] += 1
                    print(f"{path.relative_to(directory)}:{finding.line}:{finding.column}: {finding.code} {finding.message}")
            elapsed = time.perf_counter() - started
            table.append((root.name, len(files), parsed, sum(counts.values()), dict(sorted(counts.items())), elapsed))
        print()
        print("| package | config files | parsed | findings | by code | time |")
        print("|---|---|---|---|---|---|")
        for name, files, parsed, total, counts, elapsed in table:
            codes = ", ".join(f"{code} {n}" for code, n in counts.items()) or "-"
            print(f"| {name} | {files} | {parsed} | {total} | {codes} | {elapsed:.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
