"""`dllint server` in a 5,000-file project: from a keystroke to its diagnostics, index warm.

Generates the project of ``bench_project.py`` (100 packages of 50 modules, loaders built in
one module of each package and iterated in another) plus a 1,000-line training script that
calls factories of other packages, starts ``python -m dllint server`` with pygls' client over
stdio, opens the script and one factory module, and then, index warm, times ``--edits``
edits of the script: each a ``textDocument/didChange`` of one character (as editors send
them: incremental), from the moment it is sent to the ``publishDiagnostics`` of the script.
Prints the median, p95 and max, and the server's memory (RSS and PSS) once the project is
indexed.

Usage: ``python benchmarks/bench_server.py [--files 5000] [--edits 100] [--keep DIR]``
(needs ``pip install dllint[server] psutil``). The target: p95 at or below 50 ms on 2 cores.
``--workspace DIR --script FILE`` types in ``FILE`` (at the end of a comment line near its middle)
with ``DIR`` as the workspace instead, the script alone open (issue 32: transformers'
``trainer.py``, 4,761 lines, with the benchmark corpus of ``bench_corpus.py`` as workspace).
``--burst N`` then sends bursts of N edits back to back (typing faster than a lint) and counts
the diagnostics published for each burst: superseded versions are not linted nor published.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil
from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_project import generate  # noqa: E402 - the same project as the CLI's benchmark

SECTION = '''

def train_{i}(model, dataset, optimizer, epochs=10):
    """Section {i}: a loader from package {q}'s factory, trained for some epochs."""
    loader = build_train_loader_{q}(dataset)
    for epoch in range(epochs):
        total = 0.0
        for step, batch in enumerate(loader):
            optimizer.zero_grad()
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            total += float(loss)
            if step % 100 == 0:
                print(epoch, step, total / (step + 1))
    evaluate_{i}(model, dataset)


def evaluate_{i}(model, dataset, rounds=2):
    loader = DataLoader(dataset, batch_size=64, num_workers=2)
    seen = 0
    for _ in range(rounds):
        for batch in loader:
            seen += len(batch)
            model(batch)
    return seen
'''


def big_script(root: Path, packages: int, lines: int) -> Path:
    header = "from torch.utils.data import DataLoader\n"
    sections, imports, i = [], set(), 0
    while sum(s.count("\n") for s in sections) + len(imports) + 2 < lines:
        q = 1 + i % max(1, packages - 1)
        imports.add(f"from pkg{q}.loaders import build_train_loader_{q}\n")
        sections.append(SECTION.format(i=i, q=q))
        i += 1
    path = root / "pkg0" / "train_big.py"
    path.write_text(header + "".join(sorted(imports)) + "".join(sections))
    return path


QUIET = 1.0  # seconds without a publish that end a burst's count


def spread(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms"


class Client(BaseLanguageClient):
    def __init__(self) -> None:
        super().__init__("bench", "1")
        self.published: dict[str, asyncio.Event] = {}
        self.counts: dict[str, int] = {}

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.counts[params.uri] = len(params.diagnostics)
            self.published.setdefault(params.uri, asyncio.Event()).set()

    async def wait(self, uri: str, timeout: float = 120) -> None:
        event = self.published.setdefault(uri, asyncio.Event())
        await asyncio.wait_for(event.wait(), timeout)
        event.clear()


def text_item(path: Path) -> types.TextDocumentItem:
    return types.TextDocumentItem(uri=path.resolve().as_uri(), language_id="python", version=1, text=path.read_text())


async def bursts(client: Client, uri: str, row: int, column: int, version: int, size: int, rounds: int = 5) -> None:
    """Typing faster than a lint: ``rounds`` bursts of ``size`` edits sent back to back (each
    burst types ``size`` digits), then the publishes counted until none came for QUIET seconds,
    and the time from the burst's last edit to its last publish."""
    published, latency = [], []
    for _ in range(rounds):
        client.counts.pop(uri, None)
        count = 0
        for i in range(size):
            version += 1
            at = types.Position(line=row, character=column + i)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="1")],
                )
            )
        sent = last = time.perf_counter()
        while True:
            try:
                await client.wait(uri, QUIET)
            except asyncio.TimeoutError:
                break
            count, last = count + 1, time.perf_counter()
        published.append(count)
        latency.append(last - sent)
        column += size
    print(f"bursts of {size} edits sent back to back: publishes per burst {published} "
          f"(one per edit before superseded versions were dropped); last edit -> its diagnostics: {spread(latency)}")


async def measure(root: Path, script: Path, factory: Path | None, edits: int, burst: int = 0) -> None:
    client = Client()
    await client.start_io(sys.executable, "-m", "dllint", "server", cwd=str(root))
    server = psutil.Process(client._server.pid)  # type: ignore[union-attr]
    started = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.resolve().as_uri())
    )
    client.initialized(types.InitializedParams())
    uri = script.resolve().as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=text_item(script)))
    await client.wait(uri)
    first = time.perf_counter() - started
    if factory is not None:
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=text_item(factory)))
        await client.wait(factory.resolve().as_uri())
    memory = server.memory_full_info()
    print(f"first diagnostics of the script (server start, imports, index): {first:.2f} s; {client.counts[uri]} findings")
    print(f"server memory, project indexed: RSS {memory.rss / 2**20:.0f} MB, PSS {getattr(memory, 'pss', memory.uss) / 2**20:.0f} MB")
    lines = script.read_text().splitlines()
    row = _typing_row(lines)
    column = len(lines[row])
    latencies, cpu = [], []
    for version in range(2, edits + 12):
        insert = version % 2 == 0  # type a digit, then delete it: the text alternates between two states
        start = types.Position(line=row, character=column)
        end = start if insert else types.Position(line=row, character=column + 1)
        change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text="1" if insert else "")
        sent, before = time.perf_counter(), sum(server.cpu_times()[:2])
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
        await client.wait(uri)
        if version >= 12:  # the first ten warm up
            latencies.append(time.perf_counter() - sent)
            cpu.append(sum(server.cpu_times()[:2]) - before)
        if factory is not None:
            await client.wait(factory.resolve().as_uri())  # the other open document is re-checked after
    print(f"didChange -> publishDiagnostics over {len(latencies)} edits: {spread(latencies)}")
    print(f"the server's CPU time for each (what a busy machine does not inflate): {spread(cpu)}")
    if burst:
        await bursts(client, uri, row, column, edits + 12, burst)
    print(f"load average (1 min) at the end: {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def _typing_row(lines: list[str]) -> int:
    """Where to type: the generated script's ``total = 0.0``, else the first comment line from the
    middle of the file on (a digit typed there keeps the module parseable)."""
    found = [i for i, line in enumerate(lines) if "total = 0.0" in line]
    if found:
        return found[0]
    middle = len(lines) // 2
    return next(i for i in [*range(middle, len(lines)), *range(middle)] if lines[i].lstrip().startswith("#"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="generate here and keep it")
    parser.add_argument("--workspace", type=Path, help="an existing project to use as the workspace")
    parser.add_argument("--script", type=Path, help="with --workspace: the file typed in")
    parser.add_argument("--burst", type=int, default=0, help="also send bursts of this many edits back to back")
    options = parser.parse_args()
    if options.workspace is not None:
        count = sum(1 for _ in options.workspace.rglob("*.py"))
        print(f"workspace {options.workspace}: {count} files; script: {len(options.script.read_text().splitlines())} lines")
        asyncio.run(measure(options.workspace, options.script, None, options.edits, options.burst))
        return
    root = options.keep or Path(tempfile.mkdtemp(prefix="dllint-server-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        _, factory = generate(root, options.files)
        script = big_script(root, max(1, options.files // 50), options.lines)
        count = sum(1 for _ in root.rglob("*.py"))
        print(f"project: {count} files; script: {len(script.read_text().splitlines())} lines")
        asyncio.run(measure(root, script, factory, options.edits, options.burst))
    finally:
        if options.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
