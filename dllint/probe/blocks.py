"""Where each recommended setting is written, in the user's own terms.

The probe's settings block names DataLoader arguments; a user acts on it where the value is
written, which is often not the ``DataLoader(...)`` call. After the run, this module reads the
source of the loader's call site (and the probed script) statically and places each setting:

- ``call``: a literal (or nothing) in the ``DataLoader(...)`` call: paste ``name=value`` there;
- ``training_args``: a loader a HF ``Trainer`` built (no DataLoader call at the user's line) is
  configured by the ``TrainingArguments(...)`` call: ``dataloader_num_workers=...``;
- ``datamodule``: ``num_workers=self.num_workers`` in a (Lightning) DataModule method: the
  ``__init__`` argument that sets the attribute, at the class's construction (``MyData(num_workers=2)``);
- ``config``: ``cfg.data.num_workers`` read from a Hydra / OmegaConf / mmengine config file,
  also when the loader is built by a factory in another module that receives part of the config:
  the key and the file and line it is written at (``data.num_workers: 2  # conf/data/default.yaml:3``).
  The key is the one whose value is the loader's value at run time (a factory's ``cfg.num_workers``
  is the config's only ``*.num_workers`` of that value, or the caller passes ``cfg.data``).

A loader built inside a loop (DL204 confirmed: the script built it again and again) gets "build it
once, before the loop" first, with DL204's measured saving: settings on a loader rebuilt every time
round (persistent workers above all) cannot help.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from dllint.configs.code_keys import key_chain
from dllint.configs.document import Mapping, Node, Scalar, walk
from dllint.configs.inherit import read_config_file
from dllint.probe.checks.sweep import DEFAULT_PREFETCH
from dllint.probe.recommend import Recommendation, recommend

# TrainingArguments' names for the DataLoader's options (transformers' TrainingArguments).
TRAINING_ARGUMENTS = {
    "num_workers": "dataloader_num_workers",
    "persistent_workers": "dataloader_persistent_workers",
    "pin_memory": "dataloader_pin_memory",
    "prefetch_factor": "dataloader_prefetch_factor",
}
CALL, TRAINING_ARGS, DATAMODULE, CONFIG = "call", "training_args", "datamodule", "config"
Scripts = list[tuple[ast.Module, str]]  # (module, its path): the call's own file first, then the probed script


@dataclass(frozen=True)
class Place:
    """Where one setting is written: how (``kind``), under which name, at which file:line."""

    kind: str
    name: str
    where: str  # "train.py:12" (relative to the current directory when below it)
    owner: str = ""  # the call or file the group is pasted into: "MyData(...)", "conf/config.yaml"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "where": self.where, **({"owner": self.owner} if self.owner else {})}


@dataclass(frozen=True)
class Terms:
    """One loader's block in the user's terms: each setting's place, and DL204's move."""

    places: dict[str, Place] = field(default_factory=dict)
    build_once: str | None = None  # DL204: the loader is built inside a loop; the measured saving
    unplaced: dict[str, str] = field(default_factory=dict)  # settings the user's terms have no name for: why

    def moved(self, label: Callable[[str, int], str | None]) -> Terms:
        """The places re-addressed (a notebook's joined-module line as its cell): ``label(path, line)``, None to keep."""
        places = {}
        for name, place in self.places.items():
            path, _, line = place.where.rpartition(":")
            shown = label(path, int(line)) if line.isdigit() else None
            places[name] = replace(place, where=shown) if shown else place
        return replace(self, places=places)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"places": {name: place.to_dict() for name, place in self.places.items()}}
        if self.build_once is not None:
            data["build_once"] = self.build_once
        if self.unplaced:
            data["unplaced"] = self.unplaced
        return data


def _relative(path: str) -> str:
    """Relative to the current directory where below it, as the report's call sites are."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _shown(path: str, line: int) -> str:
    return f"{_relative(path)}:{line}"


def _tree(path: str) -> ast.Module | None:
    """The file's module; a notebook's joined code cells (its call sites are lines of those)."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _parsed(path: str, mtime_ns: int, size: int) -> ast.Module | None:
    """Read once per version of the file (a loader's block reads it for every setting)."""
    from dllint.probe.notebook_target import is_notebook, joined_module

    try:
        if is_notebook(path):
            return ast.parse(joined_module(path)[0])
        with open(path, encoding="utf-8") as stream:
            return ast.parse(stream.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _loader_call(tree: ast.Module, line: int) -> ast.Call | None:
    """The innermost ``...DataLoader(...)`` call whose span holds ``line``."""
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _called_name(node).endswith("DataLoader")
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    return min(calls, key=lambda call: (call.end_lineno or call.lineno) - call.lineno) if calls else None


def _calls_named(tree: ast.Module, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _called_name(node) == name]


def place_settings(summary: dict[str, Any], settings: dict[str, Any], script: str | None, in_loop_saving: str | None) -> Terms:
    """Each setting of a block for the loader ``summary`` describes, placed in the user's terms.

    ``script`` is the probed script (its config decorator, its calls to a factory);
    ``in_loop_saving`` DL204's measured saving where the loader is rebuilt in a loop.
    """
    path, line = summary.get("path"), summary.get("line")
    tree = _tree(path) if isinstance(path, str) else None
    if tree is None or not isinstance(path, str) or not isinstance(line, int):
        return Terms(build_once=in_loop_saving)
    call = _loader_call(tree, line)
    if call is None:
        return _training_args(tree, path, settings, in_loop_saving)
    scripts: Scripts = [(tree, path)]
    other = _tree(script) if script and os.path.realpath(script) != os.path.realpath(path) else None
    if other is not None and script:
        scripts.append((other, script))
    places: dict[str, Place] = {}
    for name in settings:
        value = next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
        places[name] = (_from_attribute(tree, call, value, summary.get(name), path, scripts)
                        or _from_config(tree, call, value, summary.get(name), scripts)
                        or Place(CALL, name, _shown(path, call.lineno)))
    return Terms(places, in_loop_saving)


# -- HF Trainer ----------------------------------------------------------------------------
def _training_args(tree: ast.Module, path: str, settings: dict[str, Any], in_loop_saving: str | None) -> Terms:
    """No DataLoader call at the user's line: a framework built it; HF's from ``TrainingArguments``."""
    calls = _calls_named(tree, "TrainingArguments")
    if not calls:
        return Terms(build_once=in_loop_saving)
    where = _shown(path, calls[0].lineno)
    places = {name: Place(TRAINING_ARGS, TRAINING_ARGUMENTS[name], where, "TrainingArguments(...)")
              for name in settings if name in TRAINING_ARGUMENTS}
    unplaced = {name: "TrainingArguments has no option for it" for name in settings if name not in TRAINING_ARGUMENTS}
    return Terms(places, in_loop_saving, unplaced)


# -- a DataModule's attribute ----------------------------------------------------------------
def _from_attribute(tree: ast.Module, call: ast.Call, value: ast.expr | None, runtime: Any, path: str,
                    scripts: Scripts) -> Place | None:
    """``num_workers=self.workers`` (or ``self.hparams.workers``): the ``__init__`` argument behind it,
    or the config key it is set from (``self.workers = cfg.num_workers``), or the assignment itself."""
    attribute = _self_attribute(value)
    if attribute is None:
        return None
    owner = _enclosing_class(tree, call)
    if owner is None:
        return None
    parameter = _init_parameter(owner, attribute)
    if parameter is None:
        assigned = _assignment(owner, attribute)
        from_config = _from_config(tree, assigned, assigned.value, runtime, scripts) if assigned else None
        return from_config or Place(DATAMODULE, f"self.{attribute}", _shown(path, assigned.lineno if assigned else call.lineno),
                                    owner.name)
    for script_tree, file in scripts:
        constructions = _calls_named(script_tree, owner.name)
        if constructions:
            return Place(DATAMODULE, parameter, _shown(file, constructions[0].lineno), f"{owner.name}(...)")
    init = _init(owner)
    return Place(DATAMODULE, parameter, _shown(path, init.lineno if init else owner.lineno), f"{owner.name}.__init__")


def _self_attribute(value: ast.expr | None) -> str | None:
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return value.attr
    if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Attribute)
            and value.value.attr == "hparams" and isinstance(value.value.value, ast.Name) and value.value.value.id == "self"):
        return value.attr
    return None


def _enclosing_class(tree: ast.Module, node: ast.AST) -> ast.ClassDef | None:
    parents = _parents(tree)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, ast.ClassDef):
        current = parents.get(id(current))
    return current


def _init(owner: ast.ClassDef) -> ast.FunctionDef | None:
    return next((node for node in owner.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)


def _init_parameter(owner: ast.ClassDef, attribute: str) -> str | None:
    """The ``__init__`` parameter that ``self.<attribute>`` is set from (``save_hyperparameters()``: its own name)."""
    init = _init(owner)
    if init is None:
        return None
    parameters = {arg.arg for arg in init.args.args[1:] + init.args.kwonlyargs}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in parameters:
            if any(_self_attribute(target) == attribute for target in node.targets):
                return node.value.id
    saves = any(isinstance(node, ast.Call) and _called_name(node) == "save_hyperparameters" for node in ast.walk(init))
    return attribute if saves and attribute in parameters else None


def _assignment(owner: ast.ClassDef, attribute: str) -> ast.Assign | None:
    for node in ast.walk(owner):
        if isinstance(node, ast.Assign) and any(_self_attribute(target) == attribute for target in node.targets):
            return node
    return None


# -- a config file's key -------------------------------------------------------------------
def _from_config(tree: ast.Module, at: ast.AST, value: ast.expr | None, runtime: Any, scripts: Scripts) -> Place | None:
    """The config key ``value`` (an attribute chain, at node ``at``) reads, with the file and line it is written at."""
    chain = key_chain(value)
    if chain is None:
        return None
    root, keys = chain[0], list(chain[1])
    files = [config for script_tree, file in scripts for config in _config_files(script_tree, file)]
    for file in dict.fromkeys(files):
        document = read_config_file(file, 0)
        if document is None:
            continue
        for prefix in _prefixes(tree, at, root, scripts):
            key = (*prefix, *keys)
            found = _scalar_at(document.root, key)
            if found is not None:
                return _config_place(key, found, file)
        # `self.cfg.num_workers`: the config is held in an attribute; its keys follow it
        tails = [tuple(keys)] + ([tuple(keys[1:])] if root == "self" and len(keys) > 1 else [])
        matches = [(key, node) for key, node in _scalars(document.root) if any(key[-len(tail):] == tail for tail in tails)
                   and (runtime is None or node.value == runtime)]
        if len(matches) == 1:
            return _config_place(*matches[0], file)
    return None


def _config_place(key: tuple[str, ...], node: Scalar, file: str) -> Place:
    return Place(CONFIG, ".".join(key), _shown(node.path or file, node.span.line), _relative(file))


def _scalar_at(root: Node, key: tuple[str, ...]) -> Scalar | None:
    node: Node | None = root
    for step in key:
        node = node.get(step) if isinstance(node, Mapping) else None
    return node if isinstance(node, Scalar) else None


def _scalars(root: Node) -> list[tuple[tuple[str, ...], Scalar]]:
    return [(key, node) for key, node, _ in walk(root) if isinstance(node, Scalar)]


def _prefixes(tree: ast.Module, at: ast.AST, root: str, scripts: Scripts) -> list[tuple[str, ...]]:
    """Where ``root`` sits in the whole config: () when it is the config itself (the ``@hydra.main``
    function's parameter, a loaded config), ``("data",)`` when a factory's parameter receives ``cfg.data``."""
    function = _enclosing_function(tree, at)
    if function is None or root not in [arg.arg for arg in function.args.args + function.args.kwonlyargs]:
        return [()]
    positional = [arg.arg for arg in function.args.args]
    position = positional.index(root) if root in positional else None
    called = function.name
    owner = _enclosing_class(tree, function) if called == "__init__" else None
    if owner is not None:  # an __init__ is called as its class, without self
        called, position = owner.name, position - 1 if position else None
    prefixes: list[tuple[str, ...]] = []
    for script_tree, _ in scripts:
        for caller in _calls_named(script_tree, called):
            given: ast.expr | None = caller.args[position] if position is not None and position < len(caller.args) else None
            given = given or next((keyword.value for keyword in caller.keywords if keyword.arg == root), None)
            chain = key_chain(given)
            if chain is not None:
                prefixes.append(chain[1])
            elif isinstance(given, ast.Name):
                prefixes.append(())
    return list(dict.fromkeys(prefixes)) or [()]


def _enclosing_function(tree: ast.Module, node: ast.AST) -> ast.FunctionDef | None:
    parents = _parents(tree)
    current = parents.get(id(node))
    while current is not None and not isinstance(current, ast.FunctionDef):
        current = parents.get(id(current))
    return current


def _config_files(tree: ast.Module, path: str) -> list[str]:
    """The config files a script names: ``@hydra.main(config_path=..., config_name=...)``,
    ``OmegaConf.load("...")``, ``Config.fromfile("...")`` (string literals only)."""
    here = os.path.dirname(os.path.abspath(path))
    files: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        if name == "main" and isinstance(node.func, ast.Attribute) and _text(node.func.value) == "hydra":
            directory = _argument(node, "config_path", 1) or ""
            config = _argument(node, "config_name", 2)
            if config:
                base = os.path.join(here, directory, config)
                files.append(base if base.endswith((".yaml", ".yml")) else base + ".yaml")
        elif name in ("load", "fromfile") and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            files.append(os.path.join(here, node.args[0].value))
    return [os.path.normpath(file) for file in files]


def _text(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _argument(call: ast.Call, name: str, position: int) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            return keyword.value.value
    given = call.args[position - 1] if len(call.args) >= position else None
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None


# -- one loader's terms, and the text ----------------------------------------------------------
def in_loop_saving(results: list[Any]) -> str | None:
    """DL204's measured saving on this loader (its verdict and evidence) where DL204 is confirmed: the
    script built the loader again and again. Not a loop read statically: a loader built per fold of a
    cross-validation is rebuilt on purpose, and DL204's own rule knows those cases."""
    for result in results:
        if result.code == "DL204" and result.verdict == "confirmed":
            return f"{result.verdict}: {result.evidence}" if result.evidence else result.verdict
    return None


def _yaml(value: Any) -> str:
    return {True: "true", False: "false", None: "null"}.get(value, str(value)) if isinstance(value, (bool, type(None))) else str(value)


GROUP_HEADINGS = {
    CALL: "in the DataLoader call at {where} (paste into the call)",
    TRAINING_ARGS: "in the TrainingArguments call at {where} (paste into the call)",
    DATAMODULE: "in {owner} at {where}",
    CONFIG: "in {owner} (change each key where it is written)",
}


def render_settings(settings: dict[str, Any], effects: dict[str, str], dropped: tuple[str, ...],
                    terms: Terms | None, call_site: str) -> list[str]:
    """The block's header and settings, each under the place the user writes it."""
    lines: list[str] = []
    if terms is not None and terms.build_once is not None:
        measured = f" ({terms.build_once})" if terms.build_once else ""
        lines.append(f"  build this DataLoader once, before the loop: the script builds it again each time round{measured}; "
                     "no setting on the call can save what a new loader costs each time")
    places = terms.places if terms is not None else {}
    if all(place.kind == CALL for place in places.values()) and not (terms and terms.unplaced):
        lines.append(f"  recommended settings for the DataLoader at {call_site} (paste into the call):")
        lines.extend(f"      {name}={value!r},  # {effects.get(name, '')}" for name, value in settings.items())
    elif any(place.kind == TRAINING_ARGS for place in places.values()):  # HF's Trainer builds it at the user's line
        lines.append(f"  recommended settings for the DataLoader the Trainer builds at {call_site}, in TrainingArguments' names:")
        lines.extend(_grouped(settings, effects, terms))
    else:
        lines.append(f"  recommended settings for the DataLoader at {call_site}, each where its value is written:")
        lines.extend(_grouped(settings, effects, terms))
    if dropped:
        lines.append(f"      # remove {', '.join(dropped)}: torch accepts them only with workers")
    if terms is not None and terms.build_once is not None and "persistent_workers" in effects and "persistent_workers" not in settings:
        lines.append(f"      # persistent_workers: left as it is on a loader built again each time round ({effects['persistent_workers']}); "
                     "once it is built before the loop, it keeps its workers across epochs")
    return lines


def _grouped(settings: dict[str, Any], effects: dict[str, str], terms: Terms | None) -> list[str]:
    assert terms is not None
    groups: dict[tuple[str, str], list[str]] = {}
    for name, value in settings.items():
        place = terms.places.get(name)
        if place is None:
            continue
        heading = GROUP_HEADINGS[place.kind].format(where=place.where, owner=place.owner or place.where)
        if place.kind == CONFIG:
            line = f"{place.name}: {_yaml(value)}  # {place.where}; {effects.get(name, '')}"
        elif place.kind == DATAMODULE and place.name.startswith("self."):
            line = f"{place.name} = {value!r}  # {effects.get(name, '')}"
        else:
            sets = f"sets {name}; " if place.name != name else ""
            line = f"{place.name}={value!r},  # {sets}{effects.get(name, '')}"
        groups.setdefault((place.kind, heading), []).append(line)
    lines = []
    for (_, heading), entries in groups.items():
        lines.append(f"    {heading}:")
        lines.extend(f"      {entry}" for entry in entries)
    for name, why in terms.unplaced.items():
        lines.append(f"    not settable there: {name}={settings[name]!r} ({why})")
    return lines


def rank_recommendations(summary: dict[str, Any], results: list[Any],
                         rank_steps: dict[int, dict[str, Any]]) -> dict[int, Recommendation]:
    """Under a launcher: each rank's own block, from its own real step and the results measured on it."""
    blocks = {}
    for rank, step in rank_steps.items():
        own = [result for result in results if result.measurements.get("rank") in (rank, None)]
        recommendation = recommend(summary, own, step)
        if recommendation is not None:
            blocks[rank] = recommendation
    return blocks


# The setting each time-based code is about: its confirmed finding says where that setting is written.
SETTING_OF = {"DL201": "persistent_workers", "DL205": "persistent_workers", "DL202": "num_workers",
              "DL203": "num_workers", "DL207": "num_workers", "DL206": "pin_memory"}


def name_place(finding_probe: dict[str, Any], code: str, terms: Terms) -> None:
    """A confirmed finding whose setting is written elsewhere than the DataLoader call says where (in place):
    ``change data.num_workers in conf/config.yaml:3``, as a static finding's config keys do."""
    place = terms.places.get(SETTING_OF.get(code, ""))
    if finding_probe.get("verdict") != "confirmed" or "change" in finding_probe or place is None or place.kind == CALL:
        return
    finding_probe["change"] = [f"{place.name} in {place.where}"]
    text = f"change {place.name} in {place.where}" if place.kind == CONFIG else f"set {place.name} in {place.owner} at {place.where}"
    evidence = finding_probe.get("evidence") or ""
    finding_probe["evidence"] = f"{evidence}; {text}" if evidence else text


def for_a_rebuilt_loader(recommendation: Recommendation, summary: dict[str, Any]) -> Recommendation:
    """DL204's block: persistent workers cannot help a loader built again each time round (timed: 6.60 s as
    written, 6.82 s with them, 6.10 s with the loader moved out), so the block leaves the script's
    ``persistent_workers`` alone and the re-run does not apply it; the move and its saving head the block."""
    if "persistent_workers" not in recommendation.settings:
        return recommendation
    settings = {name: value for name, value in recommendation.settings.items() if name != "persistent_workers"}
    current = {**summary, "prefetch_factor": summary.get("prefetch_factor") or DEFAULT_PREFETCH}
    changed = bool(recommendation.dropped) or any(current.get(name) != value for name, value in settings.items())
    return replace(recommendation, settings=settings, changed=changed)


# What a loader iterated without a training step (a factory target) has no value for.
NO_STEP_KEYS = ("data_wait_fraction", "data_wait_s", "step_s")


def comparable(step: dict[str, Any]) -> dict[str, Any]:
    """A real step as a block's before/after compares it: a factory target's loader is drawn with no
    step ("no data wait to measure"), so its time between batches is no data wait, and no step time."""
    if not step.get("no_step"):
        return step
    return {key: value for key, value in step.items() if key not in NO_STEP_KEYS}
