"""The project index's limits (read at call time: tests lower them) and the records its parts
pass each other (a call found in another file); the parts are composed in
:mod:`dllint.project.index`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from dllint.facts.flow.records import CallShape, Effects

if TYPE_CHECKING:
    from dllint.facts.flow.model import Constant, Element


SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist", "venv"})  # venvs, build copies
MAX_FOLLOW = 6  # project calls followed from one parameter, transitively
MAX_ANCESTORS = 16  # project classes visited from one base class
MAX_PROJECT_FILES = 50_000
MAX_KEPT_BYTES = 128 * 1024 * 1024  # file contents kept for repeated "who calls X" scans (beyond: re-read per scan)
MAX_REACH_DEPTH = 4  # calls followed from one worker-side function across files, transitively
MAX_REACH_FUNCTIONS = 32  # functions of other files looked at for one question
MAX_CANDIDATES = 8  # files defining a method named like obj.m(): more, and the name says nothing
# Files naming a function's call ("build_loader(") whose calls are read to decide what becomes of
# the value it returns. More, and the name is a common one (main(, train(, run(): its callers are
# not read (each would be summarized), as for a function no other file calls.
MAX_CALLER_FILES = 48
LOADER_GATE = b"DataLoader"  # a file that builds loaders over a class names DataLoader
# Summaries kept by content digest beyond their file's current entry: a file an editor changes
# back and forth (typing, undo) is not summarized again for each state.
MAX_SUMMARIES_BY_CONTENT = 256


class CallRecord(NamedTuple):
    """A call of a function in another file, as its caller's summary recorded it."""

    line: int
    effects: Effects
    elements: dict[str, Effects]  # see CallSummary.elements
    returned_by: str  # see CallSummary.returned_by
    args: dict[str, Constant]  # see CallSummary.args
    shape: CallShape  # see CallSummary.shape
    cpu_counts: tuple[str, ...]  # see CallSummary.cpu_counts
    cuda_devices: dict[str, str]  # see CallSummary.cuda_devices
    options: dict[str, str]  # see CallSummary.options
    dicts: dict[str, list[dict[str, Constant]]]  # see CallSummary.dicts
    rebuilt: int  # see CallSummary.rebuilt

    def element(self, index: Element) -> Effects:
        """What the caller does with one element of the returned container: kept where it
        does not take the container apart (as a returned container always was)."""
        key = str(index)
        if key.startswith("["):  # a dict's entry (looping over a dict gives its keys, not its entries)
            return entry_effects(self.elements, key)
        found = self.elements.get(key) or self.elements.get("*")
        return found if found is not None else Effects(stores=True)


def entry_effects(entries: dict[str, Effects], path: str) -> Effects:
    """What happens to the dict entry at ``path`` ("['val']", "['val'].dataloader"), from
    what a summary recorded (see FunctionSummary.entries): its own record; else, when
    nothing reads its key, what reaches any entry; else kept (undecidable)."""
    found = entries.get(path)
    if found is not None:
        return found
    met = any(path.startswith(key) and path[len(key):][:1] in ".[" for key in entries if key.startswith("["))
    if met or "?" not in entries:  # its key is read, but not this path under it: undecidable
        return Effects(stores=True)
    return entries["?"]
