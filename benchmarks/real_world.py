"""Run dllint over the training code of real PyTorch projects and count findings per rule.

Downloads the packages from PyPI with ``pip download --no-deps`` into a temporary
directory (never into the repository), unpacks them, lints the training code with
``dllint check --select ALL --format json`` and prints the counts per rule and per
package. ``--json FILE`` keeps every finding for judging (see REAL_WORLD.md).

    python benchmarks/real_world.py                 # pinned versions, temp dir removed after
    python benchmarks/real_world.py --keep --json /tmp/findings.json
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# (distribution, version, prefer an sdist, paths inside the unpacked archive to lint).
# Paths are globs; the training code of each project as its package ships it.
PACKAGES = (
    # The sdist ships the package and its tests, not train.py: lint both.
    ("timm", "1.0.31", True, ("*/timm", "*/tests", "*/train.py", "*/validate.py")),
    # No examples/ in the sdist: the Trainer and its data helpers.
    (
        "transformers",
        "5.23.0",
        True,
        ("*/examples", "*/src/transformers/trainer.py", "*/src/transformers/trainer_*.py", "*/src/transformers/data"),
    ),
    ("pytorch-lightning", "2.6.6", True, ("*/src/pytorch_lightning", "*/pytorch_lightning")),
    # torchvision publishes wheels only; its references/ training scripts are not on PyPI.
    ("torchvision", "0.29.1", False, ("torchvision",)),
)


def download(name: str, version: str, sdist: bool, dest: Path, latest: bool) -> Path:
    spec = name if latest else f"{name}=={version}"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dest), spec]
    if sdist:
        command[4:4] = ["--no-binary", ":all:"]
    else:
        command[4:4] = ["--only-binary", ":all:", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64"]
    before = set(dest.iterdir())
    subprocess.run(command, check=True)
    new = sorted(set(dest.iterdir()) - before)
    if not new:  # already there from an earlier --keep run
        key = name.replace("-", "_").lower()
        new = [p for p in dest.iterdir() if p.name.replace("-", "_").lower().startswith(key) and p.is_file()]
    return new[0]


def unpack(archive: Path, into: Path) -> Path:
    target = into / archive.name.replace(".tar.gz", "").replace(".whl", "").replace(".zip", "")
    if target.exists():
        return target
    target.mkdir(parents=True)
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    else:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target)
    return target


def lint(paths: list[Path]) -> list[dict]:
    command = [
        sys.executable, "-m", "dllint", "check", "--select", "ALL", "--format", "json",
        "--exit-zero", "--no-cache", *map(str, paths),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"dllint failed ({result.returncode}):\n{result.stderr}")
    if result.stderr.strip():
        print(result.stderr.strip(), file=sys.stderr)  # internal errors: a dllint bug worth seeing
    return json.loads(result.stdout or "[]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="download and unpack here (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the downloaded files")
    parser.add_argument("--latest", action="store_true", help="the newest releases instead of the pinned ones")
    parser.add_argument("--json", type=Path, help="write every finding, with its package, to this file")
    args = parser.parse_args()

    root = args.dir or Path(tempfile.mkdtemp(prefix="dllint-real-world-"))
    root.mkdir(parents=True, exist_ok=True)
    findings: list[dict] = []
    try:
        for name, version, sdist, patterns in PACKAGES:
            (root / "archives").mkdir(exist_ok=True)
            archive = download(name, version, sdist, root / "archives", args.latest)
            tree = unpack(archive, root / "src")
            paths = sorted({p for pattern in patterns for p in tree.glob(pattern)})
            files = sum(1 if p.is_file() else sum(1 for _ in p.rglob("*.py")) for p in paths)
            found = lint(paths) if paths else []
            for finding in found:
                finding["package"] = archive.name
                finding["path"] = str(Path(finding["path"]).relative_to(tree))
            findings += found
            print(f"{archive.name}: {files} files, {len(found)} findings", file=sys.stderr)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)

    by_rule = collections.Counter(f["code"] for f in findings)
    by_package: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for finding in findings:
        by_package[finding["code"]][finding["package"].split("-")[0]] += 1
    print(f"{'rule':<7}{'total':>6}  per package")
    for code in sorted(by_rule):
        spread = ", ".join(f"{pkg} {n}" for pkg, n in sorted(by_package[code].items()))
        print(f"{code:<7}{by_rule[code]:>6}  {spread}")
    print(f"{'all':<7}{sum(by_rule.values()):>6}")
    if args.json:
        args.json.write_text(json.dumps(findings, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
