"""``num_workers=cfg.train_ds.num_workers``: which config file(s) a ``cfg`` comes from, and
which key the expression reads (the rule catalog "Config files").

Only what the code states soundly: a Hydra ``@hydra.main(config_path=..., config_name=...)``
function's config parameter; a name bound once to ``OmegaConf.load(PATH)``,
``yaml.safe_load(open(PATH))`` (also through ``with open(PATH) as f``) or
``Config.fromfile(PATH)`` (mmengine/mmcv), where PATH resolves to a string (a literal, a name
bound once, an argparse default), an f-string (each matching file: per-profile configs) or a
path built from ``__file__``. A config changed by the code (``cfg.x = ...``, ``cfg.update(...)``,
``OmegaConf.update(cfg, ...)``) is not read. The files themselves are read by the project
(:meth:`dllint.project.ProjectView.config_value`): the facts layer never imports
``dllint.configs``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dllint.configs.code_keys import key_step

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.scopes import Scope

LOADERS = frozenset(
    {
        "omegaconf.OmegaConf.load",
        "mmengine.Config.fromfile",
        "mmengine.config.Config.fromfile",
        "mmcv.Config.fromfile",
        "mmcv.utils.Config.fromfile",
    }
)
YAML_LOADS = frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "yaml.unsafe_load"})
HYDRA_MAIN = "hydra.main"
# Methods that change a config in place: a config that meets one is not read statically.
MUTATORS = frozenset(
    {"update", "merge_from_file", "merge_from_dict", "merge_from_list", "merge_with", "merge_with_cli",
     "merge_with_dotlist", "set", "setdefault", "pop", "clear"}
)
CHANGING_CALLS = frozenset({"omegaconf.OmegaConf.update", "omegaconf.OmegaConf.set_struct", "omegaconf.OmegaConf.set_readonly"})
MAX_DEPTH = 8


@dataclass(frozen=True)
class ConfigSource:
    """Where a config object comes from: file path patterns (``*`` where an f-string inserts
    a value), each relative to the Python file's directory (``"file"``) or to where the
    script runs (``"cwd"``: the project root or the file's directory)."""

    patterns: tuple[str, ...]
    relative_to: str  # "file" or "cwd"
    # How the file is read: "hydra" (defaults list composed, ${...} resolved), "omegaconf"
    # (${...} resolved), "yaml" (as written: yaml.safe_load leaves ${...} a string),
    # "mmengine" (``_base_`` merged).
    reader: str = "yaml"


@dataclass(frozen=True)
class ConfigRead:
    source: ConfigSource
    keys: tuple[str, ...]


def config_read(expr: ast.expr, scope: Scope, facts: FileFacts) -> ConfigRead | None:
    """The config key ``expr`` reads (``cfg.train_ds.num_workers``, ``cfg["train"]["workers"]``)."""
    keys: list[str] = []
    for _ in range(MAX_DEPTH * 2):
        step = key_step(expr)
        if step is not None:
            keys.append(step[0])
            expr = step[1]
        elif isinstance(expr, ast.Name):
            found = _name_source(expr.id, scope, facts)
            if found is None:
                return None
            _, value, value_scope = found
            if isinstance(value, ConfigSource):
                return ConfigRead(value, tuple(reversed(keys))) if keys else None
            expr, scope = value, value_scope  # a name bound once to a part of a config
        elif isinstance(expr, ast.Call) and keys:  # yaml.safe_load(stream)["train"]
            source = _load_source(expr, scope, facts)
            return None if source is None else ConfigRead(source, tuple(reversed(keys)))
        else:
            return None
    return None


def _name_source(name: str, scope: Scope, facts: FileFacts) -> tuple[str, ConfigSource | ast.expr, Scope] | None:
    """("source", ConfigSource, scope) for a name bound to a config, ("part", expr, scope) for a
    name bound once to a part of one (``data_cfg = cfg.train_ds``), else None."""
    found = facts.scopes.lookup(name, scope)
    if found is None or len(found[1]) != 1:
        return None
    owner, (binding,) = found
    result: tuple[str, ConfigSource | ast.expr, Scope] | None = None
    if binding.kind == "param":
        source = _hydra_source(owner.node, binding.node, facts)
        result = None if source is None else ("source", source, owner)
    elif binding.kind == "assign" and binding.value is not None:
        value = binding.value
        if isinstance(value, (ast.Attribute, ast.Subscript, ast.Name)):
            result = ("part", value, owner)
        elif isinstance(value, ast.Call):
            source = _load_source(value, owner, facts)
            result = None if source is None else ("source", source, owner)
    # Checked last: the scan over the file's names is paid only for a config.
    return None if result is None or _mutated(name, owner, facts) else result


def _load_source(call: ast.Call, scope: Scope, facts: FileFacts) -> ConfigSource | None:
    name = facts.qualname(call.func)
    if not call.args:
        return None
    if name in LOADERS:
        return _path_source(call.args[0], scope, facts, "omegaconf" if name.startswith("omegaconf.") else "mmengine")
    if name in YAML_LOADS:
        stream = call.args[0]
        if isinstance(stream, ast.Name):  # with open(PATH) as f: yaml.safe_load(f)
            found = facts.scopes.lookup(stream.id, scope)
            if found is None or len(found[1]) != 1 or not isinstance(found[1][0].node, ast.withitem):
                return None
            stream = found[1][0].node.context_expr
        if isinstance(stream, ast.Call) and isinstance(stream.func, ast.Name) and stream.func.id == "open" and stream.args:
            return _path_source(stream.args[0], scope, facts, "yaml")
    return None


def _hydra_source(function: ast.AST, param: ast.AST, facts: FileFacts) -> ConfigSource | None:
    """The config of a ``@hydra.main(config_path=..., config_name=...)`` function's first parameter."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    arguments = [*function.args.posonlyargs, *function.args.args]
    if not arguments or arguments[0] is not param:
        return None
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and facts.qualname(decorator.func) == HYDRA_MAIN):
            continue
        keywords = {k.arg: k.value for k in decorator.keywords if k.arg}
        path, name = keywords.get("config_path"), keywords.get("config_name")
        positional = list(decorator.args) + [None, None]
        path, name = path or positional[0], name or positional[1]
        scope = facts.scopes.scope_of(decorator)
        directory, config = _string(path, scope, facts), _string(name, scope, facts)
        if directory is None or config is None or directory.startswith("pkg://"):
            return None
        if not config.endswith((".yaml", ".yml")):
            config += ".yaml"
        return ConfigSource((f"{directory}/{config}",), "file", "hydra")
    return None


def _string(expr: ast.expr | None, scope: Scope, facts: FileFacts) -> str | None:
    if expr is None:
        return None
    value = facts.resolve(expr, scope)
    return value.value if value.is_const and isinstance(value.value, str) else None


def _path_source(expr: ast.expr, scope: Scope, facts: FileFacts, reader: str) -> ConfigSource | None:
    """A path expression as file patterns: a string (through names and argparse defaults), an
    f-string (``*`` for each inserted value), or ``os.path.join(os.path.dirname(__file__), ...)``
    / ``Path(__file__).parent / ...`` (relative to the file)."""
    text = _string(expr, scope, facts)
    for _ in range(MAX_DEPTH):  # a name bound once to the path (an f-string)
        found = facts.scopes.single_value(expr.id, scope) if isinstance(expr, ast.Name) else None
        if found is None or found[1].kind != "assign" or found[1].value is None:
            break
        scope, expr = found[0], found[1].value
    if text is not None:
        return ConfigSource((text,), "cwd", reader)
    if isinstance(expr, ast.JoinedStr):
        pattern = "".join(
            part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "*" for part in expr.values
        )
        if "*" in pattern.rstrip("*").rsplit("/", 1)[0] and "/" in pattern:  # only the file name may vary
            return None
        return ConfigSource((pattern,), "cwd", reader) if pattern.strip("*") and not pattern.endswith("*") else None
    parts = _file_relative(expr, scope, facts)
    return ConfigSource(("/".join(parts),), "file", reader) if parts else None


def _file_relative(expr: ast.expr, scope: Scope, facts: FileFacts) -> list[str] | None:
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) == "os.path.join" and expr.args and not expr.keywords:
        if not _is_file_directory(expr.args[0], facts):
            return None
        rest = [_string(a, scope, facts) for a in expr.args[1:]]
        return [r for r in rest if r is not None] if rest and None not in rest else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        right = _string(expr.right, scope, facts)
        if right is None:
            return None
        if _is_file_directory(expr.left, facts):
            return [right]
        left = _file_relative(expr.left, scope, facts)
        return None if left is None else left + [right]
    return None


def _is_file_directory(expr: ast.expr, facts: FileFacts) -> bool:
    """``os.path.dirname(__file__)`` (also of ``os.path.abspath(__file__)``) or ``Path(__file__).parent``."""
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) == "os.path.dirname" and len(expr.args) == 1:
        inner = expr.args[0]
        if isinstance(inner, ast.Call) and facts.qualname(inner.func) in ("os.path.abspath", "os.path.realpath") and inner.args:
            inner = inner.args[0]
        return isinstance(inner, ast.Name) and inner.id == "__file__"
    if isinstance(expr, ast.Attribute) and expr.attr == "parent" and isinstance(expr.value, ast.Call):
        call: ast.expr = expr.value
        if isinstance(expr.value.func, ast.Attribute) and expr.value.func.attr == "resolve" and not expr.value.args:
            call = expr.value.func.value  # Path(__file__).resolve().parent
        return (
            isinstance(call, ast.Call)
            and facts.qualname(call.func) in ("pathlib.Path", "pathlib.PurePath")
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Name)
            and call.args[0].id == "__file__"
        )
    return False


def _mutated(name: str, owner: Scope, facts: FileFacts) -> bool:
    """The code changes the config bound to ``name``: a store through it, a mutating method, or
    ``OmegaConf.update/set_struct``-style calls that take it."""
    parents = facts.scopes.parents
    for scope in facts.scopes.scopes.values():
        for load in scope.loads:
            if load.id != name:
                continue
            found = facts.scopes.lookup(name, scope)
            if found is None or found[0] is not owner:
                continue
            node: ast.AST = load
            parent = parents.get(node)
            while isinstance(parent, (ast.Attribute, ast.Subscript)) and getattr(parent, "value", None) is node:
                if isinstance(parent.ctx, (ast.Store, ast.Del)):
                    return True
                node, parent = parent, parents.get(parent)
            if isinstance(node, ast.Attribute) and node.attr in MUTATORS and isinstance(parent, ast.Call) and parent.func is node:
                return True
            if isinstance(parent, ast.Call) and node in parent.args and facts.qualname(parent.func) in CHANGING_CALLS:
                return True
            if isinstance(parent, ast.AugAssign):
                return True
    return False
