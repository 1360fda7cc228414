from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from dllint.facts.endless import endless_reason
from dllint.facts.loops import STATEMENT_LOOPS, loaded_names, mutated_self_attribute, names_bound_in_loop
from dllint.facts.training import framework_passes
from dllint.facts.flow.model import Move, Passes, RemoteLoop
from dllint.facts.values import Value
from dllint.facts.worker_code import DATASET_ENTRY_METHODS, EPOCH_STATE
from dllint.findings import Finding, Fix, SetArgument
from dllint.rules import Rule, quote
from dllint.rules.fix_values import added_keyword_fix, keyword_place, splat_workers_test, workers_from_splat, workers_test
from dllint.rules.reentry import reentry_message

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class NonPersistentWorkers(Rule):
    """
    ## What it does
    Checks for a multi-worker loader without `persistent_workers=True` that is iterated more
    than once: in an epoch loop, several times, by the project's functions it is passed to
    (in any file of the project; also bound into `functools.partial` and called), by the callers of the function that returns it, or by a
    framework hook that re-iterates it (Lightning `train_dataloader`/`val_dataloader`,
    also a function assigned as one onto an instance, `dm.train_dataloader = f`;
    `trainer.fit`), following a factory handed to `apply_to_collection` or `map` to the
    loaders they hand back. A returned or stored loader that no caller in the project claims counts
    only when it is evidently a training loader (shuffled, a random or distributed sampler,
    built in `train_dataloader`); one returned by a `get_*loader` method that nothing in the
    project calls does not (a trainer outside it asks for a fresh loader when it needs one),
    nor one stored (`self.X = loader`) only for the `test_dataloader`/`predict_dataloader`
    hook that returns `self.X` (one pass). Silent where the dataset's worker-side code reads
    state the framework advances between epochs (`current_epoch`, `global_step`, `.trainer`),
    also in the project's other files (`self.task.samples()` defined by a mixin elsewhere,
    seeding by `model.current_epoch` in a third module; followed to a bounded depth), and
    where the loop changes the dataset between passes in a way its workers read (assigned,
    or changed in place: `random.shuffle(self.items)`; a method of a class this file cannot
    read counts as such a change), also where another module's epoch loop does so through the
    loader it is handed (`loader.dataset.shuffle_mapping()` in `train(loader)`), and where code
    between two passes that follow one another changes it so (`for b in loader: ...`, then
    `loader.dataset.set_stage(1)`, then `for b in loader: ...` again).
    Endless iteration (a sampler that never ends, a loader subclass that keeps one iterator)
    is one pass; an `iter()` renewed on `StopIteration` is a new pass each time.
    Loaders in tuples, lists, dataclass fields and dicts under constant keys are followed one
    by one (`train, val = build_loaders()`, `for name, dl in zip(names, [dev_dl, test_dl])`
    gives each one pass, `data["train"]` read in another file's epoch loop); a dict read by a
    key not written out (`data[name]`) keeps its loaders undecided. Every loader of a dict or
    list a train hook returns is re-iterated each epoch. The loader classes of PyG, DGL,
    webdataset and MONAI are loaders (with their documented signatures and defaults), and so
    are Hugging Face `TrainingArguments(dataloader_num_workers=...)` handed to a `Trainer`
    whose `train()` runs more than one epoch (`num_train_epochs`, default 3; not with a
    positive `max_steps`): reported at the `TrainingArguments` call, fixed with
    `dataloader_persistent_workers=True`. A training engine handed the loader iterates it every
    epoch of a count known to be more than one: PyTorch-Ignite's `engine.run(loader,
    max_epochs=N)` (N defaults to 1), MONAI's `SupervisedTrainer(max_epochs=N,
    train_data_loader=loader)`; a handler of an Ignite event fired once a run
    (`@trainer.on(Events.COMPLETED)`) iterates its loader once.

    ## Why is this bad?
    Without persistent workers, every `for batch in loader` starts all worker processes
    afresh and, under `spawn`/`forkserver`, re-imports the main module and re-pickles the
    dataset in each of them. Measured here: about 0.1 s per epoch under `fork` and 4.5-5.8 s
    per epoch under `spawn`/`forkserver`, against 5-14 ms with persistent workers. GPUs sit
    idle for that stall at the start of every epoch.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8)
    for epoch in range(100):
        for batch in loader:
            ...
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8, persistent_workers=True)
    ```

    ## Fix safety
    Safe: adds `persistent_workers=True` where `num_workers` is a number written at the call,
    else `persistent_workers=<num_workers> > 0`, so that `--workers 0` on the command line
    keeps working; for a count a `**opts` splat holds, `persistent_workers=opts.get("num_workers", 0) > 0`
    (a splat of another expression: `True`, unsafe). Unsafe where the call says `persistent_workers=False` explicitly (or a
    config file `persistent_workers: false`): that may be deliberate. No fix is offered where the loop changes the dataset (DL303): persistent
    workers would keep a stale copy; nor where the loader is iterated again inside one of its
    own passes (an evaluation helper drawing from the training loader inside the training
    loop, also inside a step loop whose `iter()` is renewed on `StopIteration`): persistent workers share one iterator, which the inner pass resets, so the outer
    epoch would never end (DL306). The message says so. A loader class of the project whose
    `__init__` takes no `persistent_workers` (no such parameter, no `**kwargs`) gets no fix at
    its construction (it would raise `TypeError`): the message names the DataLoader call in that
    `__init__`; a class of another module gets the fix as unsafe (its `__init__` is not read).

    ## References
    - [torch.utils.data.DataLoader](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
    - `dllint --probe train.py` measures the stall on your machine.
    """

    code = "DL201"
    name = "non-persistent-workers"
    summary = "workers restart every epoch: add persistent_workers=True"
    fix_safety = "sometimes"  # unsafe where persistent_workers=False (or `: false`) is written
    value_arguments = ("persistent_workers", "num_workers")
    valid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, persistent_workers=True)\n"
        "for epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def evaluate(ds):\n    loader = DataLoader(ds, num_workers=4)\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds)\nfor epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4, **opts)\nfor epoch in range(10):\n    for b in loader:\n        pass\n",
    )
    invalid = (
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, num_workers=4)\n"
        "for epoch in range(10):\n    for batch in loader:\n        pass\n",
        "from torch.utils.data import DataLoader\n"
        "def make_loader(ds):\n    return DataLoader(ds, shuffle=True, num_workers=4)\n",
    )

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        usage = None
        for loader in facts.loader_calls:
            if not loader.is_multi_worker or _negative(loader.num_workers):
                continue  # a negative count raises ValueError (DL005): no workers start
            persistent = loader.value("persistent_workers")
            if persistent.truthy() is not False:  # truthy, or unknown (a splat, a variable)
                continue
            usage = usage or facts.usage
            built_in = usage.construction_loops(loader.node)
            if built_in and any(u.kind is Move.ITERATE and any(loop in u.loops for loop in built_in) for u in usage.loader_uses(loader)):
                if not _one_per_pass(loader, built_in[-1]):
                    continue  # DL204 (loader built and iterated inside a loop) reports this one
            if usage.iteration_count(loader) < Passes.PER_EPOCH or endless_reason(facts, loader):
                continue  # iterated once; or one endless pass, whose workers never restart
            if _workers_read_changed_state(facts, loader) or _workers_read_framework_state(facts, loader):
                continue  # restarting workers is how they see the new state (DL303's situation)
            reentered = usage.reentries(loader)
            if reentered:  # persistent workers would make the inner pass reset the outer one (DL306)
                inner, outer = reentered[0]
                message = "workers restart every epoch; no fix: " + reentry_message(facts, inner, outer, "would reset the outer pass at line")
                yield self.report(facts, loader.node, message)
                continue
            message = keyword_place(self._message(usage, loader) or self.summary, loader, "persistent_workers")
            yield self.report(facts, loader.node, message, fix=self._fix(facts, loader))
        for settings in facts.loader_settings:  # TrainingArguments: the Trainer's loader
            if restarts_workers(settings) and not _negative(settings.num_workers) and framework_passes(facts, settings) > 1:
                yield self.report(facts, settings.node, settings_message(settings), fix=settings_fix(facts, settings))

    def _message(self, usage, loader) -> str | None:
        """Name the place that re-iterates the loader when it is outside this file, and own up
        to an explicit ``persistent_workers=False``: the user chose it, so say what it costs
        rather than tell them to add what is already written."""
        where = None
        for use in usage.loader_uses(loader):
            where = next((loop.where for loop in use.loops if isinstance(loop, RemoteLoop)), None)
            if where is not None and use.kind is Move.ITERATE:
                break
            where = None
        by = f" (re-iterated by {where})" if where else ""
        written = loader.argument("persistent_workers")
        if written is not None:
            return (f"`persistent_workers={quote(loader.facts, written.value)}` restarts the workers every "
                    f"epoch{by}: make it true unless they must re-read state that changes between epochs")
        return f"workers restart every epoch{by}: add persistent_workers=True" if by else None

    def check_config(self, block) -> Iterator[Finding]:
        """An evidently-training block (``train_ds``, ``train_dataloader``) with workers and
        without ``persistent_workers: true``: the framework re-iterates it every epoch. Where
        the key is absent, only a block whose keys reach the DataLoader whole
        (:attr:`~dllint.configs.blocks.ConfigBlock.takes_new_keys`): the fix adds it."""
        from dllint.configs.lint import config_finding, setting_fix, setting_message

        if not block.is_training or block.endless or block.entry("num_workers") is None:
            return
        if block.value("num_workers").is_dynamic:
            return  # `${oc.env:NUM_WORKERS}` and other resolvers: 0 on some machines, for all we know
        if not restarts_workers(block):
            return
        if block.entry("persistent_workers") is None:
            if block.builder is not None and not block.torch_defaults:
                return  # the class the block builds (a DataModule, a loader factory) has its own default
            if not block.takes_new_keys:
                return  # no code known to pass a new key on (yacs-style reads): the code site reports it
        written_here = block.report_span("num_workers", "persistent_workers")
        if written_here is None:
            return  # both inherited: the file that writes them reports it
        span = block.block_span or written_here
        if span is not None:
            message = f"workers restart every epoch: {setting_message(block, 'persistent_workers', True)}"
            yield config_finding(self, block, span, message, setting_fix(block, "persistent_workers", True))

    @classmethod
    def _fix(cls, facts, loader) -> Fix | None:
        fix = cls._persistent_fix(facts, loader)
        return None if fix is None else added_keyword_fix(loader, fix)

    @staticmethod
    def _persistent_fix(facts, loader) -> Fix | None:
        written = loader.argument("persistent_workers")
        if written is not None and written.from_splat:
            return None
        if facts.dataset_mutated_in_loop(loader):
            return None  # persistent workers would keep a stale dataset (DL303)
        if workers_from_splat(loader):
            # the count the call reads from the `**opts` dict, tested where it is read: right on every run
            test = splat_workers_test(loader) if written is None else None
            if test is not None:
                return Fix("safe", f"Add `persistent_workers={test}`", SetArgument("persistent_workers", test))
            return Fix("unsafe", "Add `persistent_workers=True` (right only while the `**` dict's num_workers > 0)", SetArgument("persistent_workers", "True"))
        # `True` only where num_workers is written as a number: `--workers 0` must keep working.
        value = workers_test(facts, loader) or "True"
        if written is not None:
            # An explicit `persistent_workers=False` may be deliberate (e.g. per-epoch state the
            # workers read at start-up): flipping it is the user's call.
            return Fix("unsafe", f"Set `persistent_workers={value}`", SetArgument("persistent_workers", value))
        return Fix("safe", f"Add `persistent_workers={value}`", SetArgument("persistent_workers", value))


def _one_per_pass(loader, loop) -> bool:
    """The loader is built from what each pass of the loop around it binds (``for ds in
    datasets: DataLoader(ds, ...)``): one loader per element, not one rebuilt per epoch (DL204
    is silent there); its own passes decide."""
    return isinstance(loop, STATEMENT_LOOPS) and bool(loaded_names(loader.node) & names_bound_in_loop(loop))


def settings_message(settings) -> str:
    return (f"{settings.settings.framework} re-iterates its train loader every epoch and these settings restart its "
            "workers each time: add dataloader_persistent_workers=True")


def settings_fix(facts, settings) -> Fix | None:
    """``dataloader_persistent_workers=True`` (``> 0`` test for a worker count that may be 0)."""
    if settings.argument("persistent_workers") is not None or settings.unknown_splat:
        return None
    value = workers_test(facts, settings) or "True"
    return Fix("safe", f"Add `dataloader_persistent_workers={value}`", SetArgument("dataloader_persistent_workers", value))


def restarts_workers(loader) -> bool:
    """Workers that may run (num_workers not provably 0) and are not kept between passes
    (``persistent_workers`` known to be falsy): a loader call or a config block."""
    return not loader.value("num_workers").is_zero_or_absent() and loader.value("persistent_workers").truthy() is False


def _negative(value: Value) -> bool:
    return value.is_int() and value.value < 0


def _workers_read_changed_state(facts, loader) -> bool:
    """Between passes the file changes dataset state that the dataset's worker-side code
    reads (``loader.dataset.epoch = e``, ``ds.set_level(e)``, ``loader.dataset.sampler.set_epoch(e)``).
    Unknown worker code (a class of another module) counts as reading it."""
    mutations = facts.loops.dataset_mutations(loader, unknown=True) + facts.loops.mutations_between_passes(loader, unknown=True)
    remote = _remote_dataset_changes(facts, loader)
    if not mutations and not remote:
        return False
    worker_code = facts.worker_code
    cls = worker_code.dataset_class(loader)
    if cls is None:
        return True
    roots = [m for m in (worker_code.find_method(cls, n) for n in DATASET_ENTRY_METHODS) if m is not None]
    read = {
        node.attr
        for function in worker_code.reached_from(roots, cls)
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        and isinstance(node.ctx, ast.Load)
    }
    for mutation in mutations:
        written = _written_attributes(facts, mutation, cls, worker_code)
        if written is None or written & read:
            return True
    for change in remote:
        method = worker_code.find_method(cls, change[:-2]) if change.endswith("()") else None
        written = {change} if not change.endswith("()") else _assigned_by(method, cls, worker_code, 0) if method is not None else None
        if written is None or written & read:
            return True
    return False


def _remote_dataset_changes(facts, loader) -> list[str]:
    """What the epoch loops of other files that re-iterate the loader change on its dataset
    (``loader.dataset.shuffle_mapping()`` in ``train(loader)`` of another module)."""
    return [
        change
        for use in facts.usage.loader_uses(loader)
        for loop in use.loops
        if isinstance(loop, RemoteLoop)
        for change in loop.dataset_changes
    ]


def _workers_read_framework_state(facts, loader) -> bool:
    """The dataset's worker-side code reads ``current_epoch``, ``global_step`` or ``.trainer``:
    its ``__getitem__``/``__iter__``, the same-file functions they call and, through the
    project index, what they call in other files (``self.task.samples()`` in a mixin that
    seeds by ``model.current_epoch`` in a third module). Seeding by ``model.current_epoch``
    draws new samples each epoch only because the workers restart."""
    worker_code = facts.worker_code
    cls = worker_code.dataset_class(loader)
    if cls is None:
        return False
    roots = [m for m in (worker_code.find_method(cls, n) for n in DATASET_ENTRY_METHODS) if m is not None]
    return worker_code.reaches(roots, cls, EPOCH_STATE)


def _written_attributes(facts, mutation: ast.AST, cls, worker_code) -> set[str] | None:
    """The dataset attributes a mutation writes; None when it cannot be told."""
    if isinstance(mutation, ast.Call):
        func = mutation.func
        if isinstance(func, ast.Name) and func.id == "setattr" and len(mutation.args) > 1:
            name = mutation.args[1]
            return {name.value} if isinstance(name, ast.Constant) and isinstance(name.value, str) else None
        if isinstance(func, ast.Attribute):
            attribute = _first_attribute(func.value)
            if attribute is not None:
                return {attribute}  # loader.dataset.sampler.set_epoch(e): the sampler changes
            method = worker_code.find_method(cls, func.attr)
            return _assigned_by(method, cls, worker_code, 0) if method is not None else None
        return None
    targets: list[ast.expr] = mutation.targets if isinstance(mutation, ast.Assign) else [t] if isinstance(t := getattr(mutation, "target", None), ast.expr) else []
    written: set[str] = set()
    for target in targets:
        attribute = _first_attribute(target) if target is not None else None
        if attribute is None:
            return None
        written.add(attribute)
    return written


def _first_attribute(expr: ast.AST) -> str | None:
    """``loader.dataset.X...`` or ``ds.X...``: X (None for the dataset itself)."""
    chain = []
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        chain.append(expr)
        expr = expr.value
    chain.reverse()  # innermost first
    for index, node in enumerate(chain):
        if isinstance(node, ast.Attribute) and node.attr == "dataset" and index + 1 < len(chain):
            above = chain[index + 1]
            return above.attr if isinstance(above, ast.Attribute) else None
    first = chain[0] if chain else None
    return first.attr if isinstance(first, ast.Attribute) and isinstance(expr, ast.Name) and first.attr != "dataset" else None


def _assigned_by(method, cls, worker_code, depth: int) -> set[str] | None:
    """``self.X`` attributes a method assigns, through ``self.m()`` calls; None on ``setattr``."""
    assigned: set[str] = set()
    for node in ast.walk(method):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            chain = target
            while isinstance(chain, ast.Attribute) and isinstance(chain.value, ast.Attribute):
                chain = chain.value
            if isinstance(chain, ast.Attribute) and isinstance(chain.value, ast.Name) and chain.value.id == "self":
                assigned.add(chain.attr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            return None
        changed = mutated_self_attribute(node) if isinstance(node, ast.Call) else None
        if changed is not None:
            assigned.add(changed)  # random.shuffle(self.items): changed in place
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self" and depth < 4
        ):
            inner = worker_code.find_method(cls, node.func.attr)
            if inner is not None and inner is not method:
                more = _assigned_by(inner, cls, worker_code, depth + 1)
                if more is None:
                    return None
                assigned |= more
    return assigned
