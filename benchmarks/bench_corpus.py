"""Benchmark dllint against ruff, TorchFix and flake8+TorchFix on real PyTorch code.

    python benchmarks/bench_corpus.py                 # download, install tools, run, print the table
    python benchmarks/bench_corpus.py --workdir /tmp/dlbench --keep   # reuse downloads next time
    python benchmarks/bench_corpus.py --readme        # also write the table into benchmarks/README.md
    python benchmarks/bench_corpus.py --workdir /tmp/dlbench --keep --project --baseline HEAD~1   # issue 32's targets
    python benchmarks/bench_corpus.py --workdir /tmp/dlbench --keep --project --growth --baseline HEAD~1   # the corpus 1, 2, 4 times

The corpus is 11 PyPI packages at pinned versions (the ``.py`` files of their
wheels, sdists where no wheel fits), downloaded with ``pip download --no-deps``
into a temporary directory that is never committed. The tools go into a
virtual environment of their own, also pinned: TorchFix needs ``libcst<1.6``,
which would clash with dllint's own, and must not pull torch (it does not
depend on it; it is installed with ``--no-deps`` and its dependencies by hand
anyway). dllint is measured as a user runs it: the ``dllint`` command of a venv
it was ``pip install``-ed into from a copy of this checkout.

Each measurement is a fresh process: wall time, CPU time (user + system of the
process and every child it waited for: worker pools included) and peak RSS of
the whole process tree (sampled every 10 ms with psutil, summed over the
processes alive at the time). Rows compared with each other run interleaved
(one run of each per round), so that a machine whose speed drifts shifts them
alike. The TorchFix comparison uses the stratified sample the issue defines:
every 30th ``.py`` file per package, sorted by path.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

CORPUS = {
    "timm": "1.0.31",
    "transformers": "5.23.0",
    "lightning": "2.6.6",
    "torchvision": "0.29.1",
    "accelerate": "1.15.0",
    "monai": "1.6.1",
    "mmengine": "0.10.7",
    "ultralytics": "8.4.190",
    "torchgeo": "0.8.1",
    "open_clip_torch": "3.3.0",
    "yolov5": "7.0.14",
}
# TorchFix 0.7.0 requires flake8>=3.8.2, PyYAML, libcst>=1.5,<1.6 (and no torch); pinned here, installed explicitly.
TOOLS = ["ruff==0.17.6", "libcst==1.5.1", "PyYAML==6.0.2", "flake8==7.1.1"]
TORCHFIX = "torchfix==0.7.0"
SAMPLE_EVERY = 30
ONE_FILE = Path("lightning/lightning/pytorch/demos/mnist_datamodule.py")
# Runs of well under a second are noisy here (the same command costs up to 1.7x from one run to
# the next): the one-file run and the check/--fix pair get more runs than the other rows (the
# median is reported, and the least).
SHORT_REPEAT = 15
README = Path(__file__).resolve().parent / "README.md"
TABLE_START, TABLE_END = "<!-- bench:start -->", "<!-- bench:end -->"


@dataclass
class Measurement:
    tool: str
    target: str
    files: int
    lines: int
    wall: float
    cpu: float
    rss_mb: float
    exit_code: int
    runs: int
    cpu_min: float = 0.0  # the least CPU of the runs: noise on a shared machine only ever adds


# -- corpus -------------------------------------------------------------------------------
def download(workdir: Path) -> Path:
    """The corpus: ``workdir/corpus/<package>/...py``; downloads and extracts what is missing."""
    archives = workdir / "archives"
    corpus = workdir / "corpus"
    archives.mkdir(parents=True, exist_ok=True)
    for package, version in CORPUS.items():
        target = corpus / package
        if target.is_dir() and any(target.rglob("*.py")):
            continue
        before = set(archives.iterdir())
        print(f"downloading {package}=={version}", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(archives), f"{package}=={version}"],
            check=True,
        )
        found = [a for a in archives.iterdir() if a not in before] or [
            a for a in archives.iterdir() if _project(a.name) == _project(package) and f"-{version}" in a.name
        ]
        if not found:
            raise SystemExit(f"pip download of {package}=={version} left no archive in {archives}")
        extract(found[0], target)
    return corpus


def _project(name: str) -> str:
    return name.split("-")[0].lower().replace(".", "_")


def extract(archive: Path, target: Path) -> None:
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp, [n for n in zf.namelist() if n.endswith(".py")])
    else:
        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and m.name.endswith(".py")]
            tf.extractall(tmp, members, filter="data") if sys.version_info >= (3, 12) else tf.extractall(tmp, members)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def build_sample(corpus: Path, workdir: Path) -> Path:
    """Every 30th .py file per package, sorted by path, copied under ``workdir/sample``."""
    sample = workdir / "sample"
    shutil.rmtree(sample, ignore_errors=True)
    for package_dir in sorted(p for p in corpus.iterdir() if p.is_dir()):
        for path in python_files(package_dir)[::SAMPLE_EVERY]:
            dest = sample / path.relative_to(corpus)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    return sample


def count(root: Path) -> tuple[int, int]:
    files = python_files(root)
    return len(files), sum(p.read_bytes().count(b"\n") for p in files)


# -- tools --------------------------------------------------------------------------------
def tools_env(workdir: Path) -> Path:
    """A venv with ruff, TorchFix and flake8 (pinned); its bin directory."""
    env = workdir / "tools-venv"
    bindir = env / ("Scripts" if os.name == "nt" else "bin")
    if (bindir / "torchfix").exists() and (bindir / "ruff").exists():
        return bindir
    print("installing ruff, TorchFix and flake8 into", env, file=sys.stderr)
    venv.create(env, with_pip=True)
    pip = [str(bindir / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, *TOOLS], check=True)
    subprocess.run([*pip, "--no-deps", TORCHFIX], check=True)
    return bindir


def export_revision(revision: str, workdir: Path) -> Path:
    """A git revision of this checkout, unpacked under ``workdir`` (the baseline's source)."""
    root = Path(__file__).resolve().parent.parent
    target = workdir / "baseline-checkout"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(root), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def install_dllint(workdir: Path, root: Path | None = None, name: str = "dllint") -> Path:
    """This checkout's dllint installed as a user gets it: ``pip install`` (byte-compiled) into a
    venv of its own, with the libcst, click and PyYAML versions of this interpreter; its bin directory.

    A venv of its own measures dllint rather than this interpreter's site-packages: an editable
    install's import hook and other packages' ``.pth`` files ran at every start on the machine
    measured (``python -c pass`` 0.04-0.05 s there, 0.011 s in the venv). It is installed from a
    copy of the checkout, so that edits made while the benchmark runs cannot change the cache key
    between the priming run and the warm run, and the build writes nothing into the checkout.
    """
    from importlib.metadata import version

    root = root or Path(__file__).resolve().parent.parent
    source = workdir / f"{name}-source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for file in ("pyproject.toml", "README.md"):
        shutil.copy2(root / file, source / file)
    shutil.copytree(root / "dllint", source / "dllint", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = workdir / f"{name}-venv"
    bindir = env / ("Scripts" if os.name == "nt" else "bin")
    if not (bindir / "python").exists():
        venv.create(env, with_pip=True)
    pip = [str(bindir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *(f"{name}=={version(name)}" for name in ("libcst", "click", "PyYAML"))], check=True)
    subprocess.run([*pip, "--no-deps", "--force-reinstall", str(source)], check=True)
    return bindir


# -- measuring ------------------------------------------------------------------------------
def measure_once(cmd: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak tree RSS MB, exit code) of one run of ``cmd``."""
    try:
        import psutil
    except ImportError:  # pragma: no cover
        psutil = None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        if psutil is None:
            return
        try:
            root = psutil.Process(proc.pid)
        except psutil.Error:
            return
        while not stop.is_set():
            total = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                pass
            peak = max(peak, total / 2**20)
            stop.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if psutil is None:
        peak = after.ru_maxrss / 1024
    if proc.returncode not in (0, 1):
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return wall, cpu, peak, proc.returncode


Spec = tuple  # (tool, target, command, setup command or None)


def measure_rounds(specs: list[Spec], repeat: int, cwd: Path) -> list[Measurement]:
    """Each command once per round, ``repeat`` rounds. Interleaved, so that a machine whose speed
    drifts over minutes (a shared one) shifts every row of a comparison alike."""
    sizes = [count(target) for _, target, _, _ in specs]  # before any setup edits a file
    runs: list[list[tuple[float, float, float, int]]] = [[] for _ in specs]
    for _ in range(repeat):
        for (tool, target, cmd, setup), out in zip(specs, runs):
            if setup:
                subprocess.run(setup, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out.append(measure_once(cmd, cwd))
            print(f"  {tool:<28} {target.name:<7} {out[-1][0]:7.2f} s", file=sys.stderr)
    rows = []
    for (tool, target, _, _), (files, lines), out in zip(specs, sizes, runs):
        wall = statistics.median(r[0] for r in out)
        chosen = min(out, key=lambda r: abs(r[0] - wall))
        rows.append(Measurement(tool, target.name, files, lines, wall, chosen[1], max(r[2] for r in out), chosen[3], len(out), min(r[1] for r in out)))
    return rows


def measure(tool: str, target: Path, cmd: list[str], repeat: int, cwd: Path, setup: list[str] | None = None) -> Measurement:
    return measure_rounds([(tool, target, cmd, setup)], repeat, cwd)[0]


def fix_rows(corpus: Path, workdir: Path, dllint: list[str], python: Path, repeat: int) -> list[Measurement]:
    """One file (the pre-commit case), and the corpus files with findings checked vs fixed.

    The files with findings are copied into ``workdir/with-findings`` afresh before each
    ``--fix`` run, so that every run fixes the same files."""
    import json

    found = subprocess.run([*dllint, "--no-cache", "--format", "json", str(corpus)], capture_output=True, cwd=workdir)
    paths = sorted({Path(f["path"]) for f in json.loads(found.stdout)})
    originals = workdir / "with-findings-original"
    shutil.rmtree(originals, ignore_errors=True)
    for path in paths:
        target = originals / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    fixing = workdir / "with-findings"
    copy = [sys.executable, "-c", f"import shutil; shutil.rmtree({str(fixing)!r}, True); shutil.copytree({str(originals)!r}, {str(fixing)!r})"]
    subprocess.run(copy, check=True)
    one_file = originals / ONE_FILE  # the pre-commit case: a 259-line module with two findings
    # The interpreter dllint runs on, alone: what any Python tool pays before its first import.
    rows = measure_rounds(
        [
            ("python -c pass", originals, [str(python), "-c", "pass"], None),
            ("dllint, one file", originals, [*dllint, "--no-cache", str(one_file)], None),
        ],
        SHORT_REPEAT,
        workdir,
    )
    # Both on a fresh copy: a check after a fix would see files with fewer findings.
    rows += measure_rounds(
        [
            ("dllint check, files with findings", fixing, [*dllint, "--no-cache", str(fixing)], copy),
            ("dllint --fix, files with findings", fixing, [*dllint, "--no-cache", "--fix", str(fixing)], copy),
        ],
        max(repeat, SHORT_REPEAT),
        workdir,
    )
    rows[1].files, rows[1].lines = 1, len(one_file.read_bytes().splitlines())
    return rows


def _touch(path: Path) -> list[str]:
    """A setup command that appends a comment to ``path`` (its content hash moves)."""
    return [sys.executable, "-c", f"open({str(path)!r}, 'ab').write(b'# touched\\n')"]


def project_rows(corpus: Path, workdir: Path, builds: dict[str, Path], ruff_default: list[str], repeat: int) -> list[Measurement]:
    """Issue 32's targets, each build beside ruff's default rules in the same rounds: the corpus
    cold; warm; warm after one file changed; one file alone; one file checked inside the corpus
    project (``--project-root``, the cache primed by a whole run, the file changed before each run:
    the pre-commit case). ``builds``: label -> the bin directory of an installed dllint."""
    one_file, victim = corpus / ONE_FILE, python_files(corpus / "yolov5")[0]
    originals = {one_file: one_file.read_bytes(), victim: victim.read_bytes()}
    commands = {label: [str(bindir / "dllint"), "check", "--exit-zero"] for label, bindir in builds.items()}
    caches = {label: workdir / f"cache-{label.replace(' ', '-')}" for label in builds}
    try:
        rows = measure_rounds(
            [("ruff check (default rules) --no-cache", corpus, ruff_default, None)]
            + [(f"{label} cold", corpus, [*cmd, "--no-cache", str(corpus)], None) for label, cmd in commands.items()],
            repeat,
            workdir,
        )
        for label, cmd in commands.items():
            shutil.rmtree(caches[label], ignore_errors=True)
            subprocess.run([*cmd, "--cache-dir", str(caches[label]), str(corpus)], cwd=workdir, stdout=subprocess.DEVNULL)
        warm = {label: [*cmd, "--cache-dir", str(caches[label]), str(corpus)] for label, cmd in commands.items()}
        rows += measure_rounds([(f"{label} warm", corpus, warm[label], None) for label in commands], repeat, workdir)
        rows += measure_rounds(
            [(f"{label} warm, 1 file changed", corpus, warm[label], _touch(victim)) for label in commands], repeat, workdir
        )
        victim.write_bytes(originals[victim])
        single = [(f"{label}, one file", corpus, [*cmd, "--no-cache", str(one_file)], None) for label, cmd in commands.items()]
        inside = [
            (f"{label}, one file in the project", corpus,
             [*cmd, "--cache-dir", str(caches[label]), "--project-root", str(corpus), str(one_file)], _touch(one_file))
            for label, cmd in commands.items()
        ]
        found = measure_rounds(single + inside, max(repeat, SHORT_REPEAT), workdir)
        for row in found:
            row.files, row.lines = 1, originals[one_file].count(b"\n")
        return rows + found
    finally:
        for path, data in originals.items():
            path.write_bytes(data)


def project_goals(rows: list[Measurement]) -> list[str]:
    """Issue 32's speed targets, per build."""
    by_name = {m.tool: m for m in rows}
    ruff = by_name["ruff check (default rules) --no-cache"]
    out = []
    for label in sorted({m.tool.split(" cold")[0] for m in rows if m.tool.endswith(" cold")}):
        cold = by_name[f"{label} cold"]
        ratio = cold.cpu / ruff.cpu
        out.append(f"{label}: cold CPU {cold.cpu:.2f} s / ruff {ruff.cpu:.2f} s = {ratio:.2f}x (goal <= 1.0x): {'met' if ratio <= 1 else 'MISSED'}")
        for row, goal in (("warm", 0.25), ("warm, 1 file changed", 0.3), (", one file", 0.12), (", one file in the project", 0.12)):
            m = by_name[f"{label} {row}".replace(" ,", ",")]
            out.append(
                f"{label}: {row.lstrip(', ')}: wall {m.wall:.3f} s, CPU {m.cpu:.3f} s (least {m.cpu_min:.3f} s) "
                f"(goal <= {goal} s): {'met' if min(m.wall, m.cpu) <= goal else 'MISSED'}"
            )
    return out


GROWTH_COPIES = (1, 2, 4)


def copies(corpus: Path, workdir: Path, n: int) -> Path:
    """The corpus ``n`` times as one project: ``copies-N/copy-i/`` each the whole corpus (hard
    links: no file is written to, and 4 copies cost no disk)."""
    target = workdir / f"copies-{n}"
    if not target.exists():
        partial = workdir / f"copies-{n}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for i in range(n):
            subprocess.run(["cp", "-al", str(corpus), str(partial / f"copy-{i}")], check=True)
        partial.rename(target)
    return target


def growth_rows(corpus: Path, workdir: Path, builds: dict[str, Path], ruff_default: list[str], repeat: int) -> list[Measurement]:
    """Issue 32's growth target: the corpus copied 1, 2 and 4 times as one project, each build
    cold beside ruff's default rules, interleaved per size."""
    rows: list[Measurement] = []
    for n in GROWTH_COPIES:
        target = copies(corpus, workdir, n)
        specs = [(f"ruff check (default rules) --no-cache, {n}x", target, [*ruff_default[:-1], str(target)], None)]
        specs += [(f"{label} cold, {n}x", target, [str(bindir / "dllint"), "check", "--exit-zero", "--no-cache", str(target)], None)
                  for label, bindir in builds.items()]
        rows += measure_rounds(specs, repeat, workdir)
    return rows


def growth_goals(rows: list[Measurement]) -> list[str]:
    """Each tool's CPU at 2 and 4 copies over 2 and 4 times its CPU at one (goal: within 10% of linear)."""
    by_name = {m.tool: m for m in rows}
    out = []
    for label in sorted({m.tool.rsplit(", ", 1)[0] for m in rows}):
        one = by_name[f"{label}, 1x"].cpu
        parts = [f"{n}x {by_name[f'{label}, {n}x'].cpu:.2f} s ({by_name[f'{label}, {n}x'].cpu / (n * one):.2f} of linear)" for n in GROWTH_COPIES[1:]]
        worst = max(by_name[f"{label}, {n}x"].cpu / (n * one) for n in GROWTH_COPIES[1:])
        goal = f" (goal <= 1.10): {'met' if worst <= 1.10 else 'MISSED'}" if label.startswith("dllint") else ""
        out.append(f"{label}: 1x {one:.2f} s, " + ", ".join(parts) + goal)
    return out


def render(rows: list[Measurement], reference: dict[str, float]) -> str:
    header = "| tool | files | lines | wall s | CPU s | peak RSS MB | wall vs dllint |\n|---|---:|---:|---:|---:|---:|---:|\n"
    body = ""
    for m in rows:
        ratio = f"{m.wall / reference[m.target]:.2f}x" if reference.get(m.target) else "-"
        runs = f" (median of {m.runs})" if m.runs > 1 else ""
        body += (
            f"| {m.tool} [{m.target}]{runs} | {m.files:,} | {m.lines:,} | {m.wall:.2f} | {m.cpu:.2f} | {m.rss_mb:.0f} | {ratio} |\n"
        )
    return header + body


def goals(by_name: dict[str, Measurement]) -> list[str]:
    out = []
    cold, ruff = by_name.get("dllint cold"), by_name.get("ruff --select ALL --no-cache")
    if cold and ruff:
        ratio = cold.wall / ruff.wall
        out.append(f"cold dllint / ruff --select ALL --no-cache wall: {ratio:.2f}x (goal <= 1.5x): {'met' if ratio <= 1.5 else 'MISSED'}")
    default = by_name.get("ruff check (default rules) --no-cache")
    if cold and default:
        wall, cpu = cold.wall / default.wall, cold.cpu / default.cpu
        met = "met" if wall <= 0.6 and cpu <= 0.6 else "MISSED"
        out.append(f"cold dllint / ruff check (default rules): wall {wall:.2f}x, CPU {cpu:.2f}x (goal <= 0.6x both): {met}")
    one, python = by_name.get("dllint, one file"), by_name.get("python -c pass")
    if one:
        start = f"; the interpreter alone: {python.cpu:.3f} s" if python else ""
        out.append(
            f"one-file run: {one.cpu:.3f} s CPU, least of {one.runs} runs {one.cpu_min:.3f} s (goal <= 0.12 s){start}: "
            f"{'met' if one.cpu <= 0.12 else 'MISSED'}"
        )
    fix, check = by_name.get("dllint --fix, files with findings"), by_name.get("dllint check, files with findings")
    if fix and check:
        ratio = fix.cpu / check.cpu
        out.append(
            f"--fix on the {check.files} files with findings / checking them: CPU {ratio:.2f}x (least of each: "
            f"{fix.cpu_min / check.cpu_min:.2f}x), wall {fix.wall / check.wall:.2f}x (goal <= 3x): {'met' if ratio <= 3 else 'MISSED'}"
        )
    sample, torchfix = by_name.get("dllint cold (sample)"), by_name.get("torchfix (sample)")
    if sample and torchfix:
        speedup = torchfix.wall / sample.wall
        out.append(f"sample: dllint {speedup:.0f}x faster than TorchFix (goal >= 30x): {'met' if speedup >= 30 else 'MISSED'}")
    warm = by_name.get("dllint warm")
    if warm:
        out.append(f"warm run: {warm.wall:.2f} s (goal < 1 s): {'met' if warm.wall < 1 else 'MISSED'}")
    dl = [m for name, m in by_name.items() if name.startswith("dllint")]
    if dl:
        peak = max(m.rss_mb for m in dl)
        out.append(f"dllint peak RSS (process tree): {peak:.0f} MB (goal < 400 MB): {'met' if peak < 400 else 'MISSED'}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="where to download and install (default: a new temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the workdir (reuse it with --workdir)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each fast measurement (median)")
    parser.add_argument("--skip-slow", action="store_true", help="skip TorchFix and flake8 (minutes each)")
    parser.add_argument("--jobs", type=int, help="dllint --jobs (default: its own default, the usable cores)")
    parser.add_argument("--readme", action="store_true", help="write the table into benchmarks/README.md")
    parser.add_argument("--project", action="store_true", help="only issue 32's project targets (cold, warm, one file)")
    parser.add_argument("--baseline", metavar="REV", help="with --project: also measure this git revision, interleaved")
    parser.add_argument("--growth", action="store_true", help="with --project: the corpus copied 1, 2 and 4 times as one project")
    args = parser.parse_args()

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="dllint-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        corpus = download(workdir)
        sample = build_sample(corpus, workdir)
        bindir = tools_env(workdir)
        dllint_bin = install_dllint(workdir)
        if args.project:
            builds = {"dllint": dllint_bin}
            if args.baseline:
                builds[f"dllint {args.baseline}"] = install_dllint(workdir, export_revision(args.baseline, workdir), "baseline")
            ruff_default = [str(bindir / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", "-q", str(corpus)]
            if args.growth:
                found = growth_rows(corpus, workdir, builds, ruff_default, args.repeat)
                print(render(found, {}) + "\n" + "\n".join(f"- {line}" for line in growth_goals(found)))
                return
            found = project_rows(corpus, workdir, builds, ruff_default, args.repeat)
            print(render(found, {}) + "\n" + "\n".join(f"- {line}" for line in project_goals(found)))
            return
        dllint = [str(dllint_bin / "dllint"), "check", "--exit-zero"] + (["--jobs", str(args.jobs)] if args.jobs else [])
        cache_dir = workdir / "dllint-cache"
        rows: list[Measurement] = []
        print(f"corpus {corpus} ({count(corpus)[0]} files), sample {sample} ({count(sample)[0]} files)", file=sys.stderr)
        ruff = [str(bindir / "ruff"), "check", "--isolated", "--select", "ALL", "--no-cache", "--exit-zero", "-q"]
        default_rules = [str(bindir / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", "-q", str(corpus)]
        serial = [str(dllint_bin / "dllint"), "check", "--exit-zero", "--jobs", "1", "--no-cache", str(corpus)]
        rows += measure_rounds(
            [
                ("ruff --select ALL --no-cache", corpus, [*ruff, str(corpus)], None),
                ("ruff check (default rules) --no-cache", corpus, default_rules, None),
                ("dllint cold", corpus, [*dllint, "--no-cache", str(corpus)], None),
                ("dllint cold --jobs 1", corpus, serial, None),
            ],
            args.repeat,
            workdir,
        )
        prime = [*dllint, "--cache-dir", str(cache_dir), str(corpus)]
        shutil.rmtree(cache_dir, ignore_errors=True)
        subprocess.run(prime, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows.append(measure("dllint warm", corpus, prime, args.repeat, workdir))
        # One changed file: re-linted alone (append a comment, so the content hash moves).
        victim = python_files(corpus / "yolov5")[0]
        original = victim.read_bytes()
        try:
            rows.append(
                measure(
                    "dllint warm, 1 file changed", corpus, prime, args.repeat, workdir,
                    setup=[sys.executable, "-c", f"open({str(victim)!r}, 'ab').write(b'# touched\\n')"],
                )
            )
        finally:
            victim.write_bytes(original)
        rows += fix_rows(corpus, workdir, dllint, dllint_bin / "python", args.repeat)
        rows += measure_rounds(
            [
                ("ruff --select ALL --no-cache (sample)", sample, [*ruff, str(sample)], None),
                ("dllint cold (sample)", sample, [*dllint, "--no-cache", str(sample)], None),
            ],
            args.repeat,
            workdir,
        )
        if not args.skip_slow:
            rows.append(measure("torchfix (sample)", sample, [str(bindir / "torchfix"), str(sample)], 1, workdir))
            rows.append(
                measure("flake8 --select TOR (sample)", sample, [str(bindir / "flake8"), "--select", "TOR", str(sample)], 1, workdir)
            )
        reference = {
            corpus.name: next(m.wall for m in rows if m.tool == "dllint cold"),
            sample.name: next(m.wall for m in rows if m.tool == "dllint cold (sample)"),
        }
        by_name = {m.tool: m for m in rows}
        table = render(rows, reference)
        machine = f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}"
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        report = table + "\n" + "\n".join(f"- {line}" for line in goals(by_name)) + f"\n\nMachine: {machine}; load average at the end {load:.1f}.\n"
        print(report)
        if args.readme:
            text = README.read_text() if README.exists() else ""
            if TABLE_START in text and TABLE_END in text:
                head, rest = text.split(TABLE_START, 1)
                _, tail = rest.split(TABLE_END, 1)
                README.write_text(f"{head}{TABLE_START}\n{report}{TABLE_END}{tail}")
            else:
                README.write_text(f"{text}\n{TABLE_START}\n{report}{TABLE_END}\n")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
