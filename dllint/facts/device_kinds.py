"""What device an expression denotes, for DL206's copies: "cuda" for a device that is always
CUDA, "maybe" for "cuda if available else cpu", None when it is not one or cannot be told.

A CUDA device is ``"cuda"``, ``f"cuda:{rank}"``, ``"cuda:" + str(args.device)``,
``torch.device("cuda", ...)``, ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``,
a name bound in the two arms of an ``if`` statement on such a test, ``try_gpu()`` where that
function of the file returns such devices on each path, a name or attribute bound once to one
(``self.device``, ``args.device`` through the argparse defaults), ``args.device`` stored by the
caller that hands ``args`` in (:mod:`~dllint.facts.handed_attributes`), ``self.device`` an
inherited ``__init__`` stores (:mod:`~dllint.facts.inherited_devices`), a parameter of ``__init__``
or an entry of a ``**kwargs`` (``kwargs["device"]``) every construction or call in the project
passes one for (:mod:`~dllint.facts.constructor_devices`), and a parameter of a function
whose every call passes one, in the file or in the project's other files as each resolves it
(:func:`passed_devices`; a parameter rebound to an expression of itself, ``device =
torch.device(device)``, keeps what it was handed). Anything else is unknown, and unknown is silent.
"""

from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING

from dllint.facts.attributes import bound_once
from dllint.facts.constructor_devices import handed_device_kind
from dllint.facts.handed_attributes import handed_attribute
from dllint.facts.inherited_devices import FUNCTIONS, inherited_device_kind, own_method
from dllint.facts.values import follow, function_calls, parameter_default, parameter_position

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.queries import PassedArguments
    from dllint.facts.scopes import Scope

TORCH_DEVICE = "torch.device"


CUDA_DEVICE_CALLS = frozenset({"torch.cuda.current_device"})


MAX_DEPTH = 8


def cuda_device_kind(facts: FileFacts, expr: ast.expr, scope: Scope, depth: int = 0) -> str | None:
    """"cuda" for a device that is always CUDA, "maybe" for "cuda if available else cpu",
    None when it is not (or cannot be told to be) a CUDA device."""
    if depth > MAX_DEPTH:
        return None
    expr, scope = follow(expr, scope, facts)
    if isinstance(expr, (ast.Constant, ast.JoinedStr, ast.BinOp)):
        return "cuda" if _is_cuda_string(_leading_text(expr)) else None
    if isinstance(expr, ast.IfExp):
        kinds = {cuda_device_kind(facts, e, scope, depth + 1) for e in (expr.body, expr.orelse)}
        return "maybe" if kinds & {"cuda", "maybe"} else None
    if isinstance(expr, ast.Call):
        name = facts.qualname(expr.func)
        if name in CUDA_DEVICE_CALLS:
            return "cuda"
        if name == TORCH_DEVICE:
            arg = next((k.value for k in expr.keywords if k.arg == "type"), None) if not expr.args else expr.args[0]
            return cuda_device_kind(facts, arg, scope, depth + 1) if arg is not None else None
        return _returned_kind(facts, expr, scope, depth)
    held = _reaching_binding(facts, expr, scope) if isinstance(expr, ast.Name) else None
    if held is None and isinstance(expr, (ast.Name, ast.Attribute)):
        held = bound_once(expr, scope, facts)
    if held is None and isinstance(expr, ast.Attribute):
        held = handed_attribute(expr, scope, facts)
        if held is None:
            return inherited_device_kind(facts, expr, scope, cuda_device_kind)
    if held is not None:
        return cuda_device_kind(facts, held[0], held[1], depth + 1)
    if isinstance(expr, ast.Name):
        return (_arms_kind(facts, expr, scope, depth) or _parameter_kind(facts, expr, scope, depth)
                or handed_device_kind(facts, expr, scope, cuda_device_kind, depth) or _branch_kind(facts, expr, scope, depth))
    if isinstance(expr, ast.Subscript):  # kwargs["device"]
        return handed_device_kind(facts, expr, scope, cuda_device_kind, depth)
    return None


def _reaching_binding(facts: FileFacts, expr: ast.Name, scope: Scope) -> tuple[ast.expr, Scope] | None:
    """The value of the one assignment of a name that has run where ``expr`` reads it, when its
    other bindings all run after the read: in the order the statements run (a notebook's cells,
    one after the other), a read sees the bindings before it, and those after it only from a
    loop that holds both (``device`` bound in cell 1, read by the training loop of cell 2,
    rebound in cell 3: ninth audit J7). A module's name read in a function is read where the
    module runs that function (:func:`_module_reads`). None where no binding comes after, where
    several may have run, or where a function may rebind it (``global``)."""
    found = facts.scopes.lookup(expr.id, scope)
    if found is None or len(found[1]) < 2:
        return None
    owner, bindings = found
    if any(expr.id in other.globals for other in facts.scopes.scopes.values()):
        return None
    reads = [expr] if owner is scope else _module_reads(facts, scope, 0) if owner.is_module else None
    if not reads:
        return None
    seen = {id(b): b for read in reads for b in bindings if not _runs_after(b.node, read, _loops_around(facts, read, owner))}
    before = list(seen.values())
    if len(before) == len(bindings) or len(before) != 1 or before[0].kind != "assign" or before[0].value is None:
        return None
    return before[0].value, owner


def _module_reads(facts: FileFacts, scope: Scope, depth: int) -> list[ast.AST] | None:
    """The module-level calls that run the function ``scope`` is (``train_epoch`` called by
    ``train``, called by a notebook cell), through its same-file callers; None where a function
    on the way is a method, decorated, named other than in a call of it (handed on), or may be
    called from another file."""
    if scope.is_module:
        return []
    function = scope.node
    if depth > MAX_DEPTH or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
        return None
    if not isinstance(facts.scopes.parents.get(function), ast.Module):
        return None
    calls = facts.usage.callers(function)
    named = [n for n in facts.nodes if n.__class__ is ast.Name and n.id == function.name]  # type: ignore[attr-defined]
    project = facts.project
    if not calls or len(named) != len(calls) or project is not None and (project.summarizing or project.named_elsewhere(function.name)):
        return None
    reads: list[ast.AST] = []
    for call in calls:
        caller = facts.scopes.scope_of(call)
        more = [call] if caller.is_module else _module_reads(facts, caller, depth + 1)
        if more is None:
            return None
        reads += more
    return reads


def _loops_around(facts: FileFacts, node: ast.AST, scope: Scope) -> list[ast.AST]:
    """The loops ``node`` is in, up to ``scope``'s own node: a binding in one of them may run
    before ``node`` on a later pass."""
    loops: list[ast.AST] = []
    current = facts.scopes.parents.get(node)
    while current is not None and current is not scope.node:
        if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(current)
        current = facts.scopes.parents.get(current)
    return loops


def _runs_after(binding: ast.AST, read: ast.AST, loops: list[ast.AST]) -> bool:
    """``binding`` (a statement) starts after ``read`` in the file, outside the loops around the read."""
    position = (getattr(binding, "lineno", 0), getattr(binding, "col_offset", 0))
    if position <= (getattr(read, "lineno", 0), getattr(read, "col_offset", 0)):
        return False
    return not any(binding is n for loop in loops for n in ast.walk(loop))


def _arms_kind(facts: FileFacts, expr: ast.Name, scope: Scope, depth: int) -> str | None:
    """A name bound only in the two arms of one ``if`` statement (``if torch.cuda.is_available():
    device = "cuda"`` / ``else: device = "cpu"``) says what ``"cuda" if ... else "cpu"`` says:
    "cuda" when both arms are CUDA, "maybe" when one is and the other is a device written out;
    None for anything else (a third binding, an arm that is unknown)."""
    found = facts.scopes.lookup(expr.id, scope)
    if found is None:
        return None
    owner, bindings = found
    if len(bindings) != 2 or any(b.kind != "assign" or b.value is None for b in bindings):
        return None
    statement = facts.scopes.parents.get(bindings[0].node)
    if not isinstance(statement, ast.If) or statement is not facts.scopes.parents.get(bindings[1].node):
        return None
    if {bindings[0].node in statement.body, bindings[1].node in statement.body} != {True, False}:
        return None
    return _either_device({_written_device(facts, b.value, owner, depth) for b in bindings})


def _branch_kind(facts: FileFacts, expr: ast.Name, scope: Scope, depth: int) -> str | None:
    """A name of a function bound only by assignments inside ``if`` statements, each of a
    device written out (TabSurvey's ``get_device``: ``if use_gpu and torch.cuda.is_available():
    if data_parallel: device = "cuda" / else: device = "cuda"`` / ``else: device = "cpu"``):
    "cuda" when every one is CUDA, "maybe" when some are; None for anything else (a binding
    outside the ``if``, an unknown value). J3's two arms of one ``if``, nested any deeper."""
    found = facts.scopes.lookup(expr.id, scope)
    if found is None or not isinstance(found[0].node, FUNCTIONS) or len(found[1]) < 2:
        return None
    owner, bindings = found
    if any(b.kind != "assign" or b.value is None or not _under_if(facts, b.node, owner.node) for b in bindings):
        return None
    return _either_device({_written_device(facts, b.value, owner, depth) for b in bindings})


def _under_if(facts: FileFacts, node: ast.AST, function: ast.AST) -> bool:
    """``node`` is in a branch of an ``if`` statement of ``function`` (not of a nested scope)."""
    current = facts.scopes.parents.get(node)
    while current is not None and current is not function:
        if isinstance(current, ast.If):
            return True
        if isinstance(current, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
            return False
        current = facts.scopes.parents.get(current)
    return False


def _returned_kind(facts: FileFacts, call: ast.Call, scope: Scope, depth: int) -> str | None:
    """``try_gpu()``, a function of this file whose every ``return`` hands back a device
    written out (``torch.device("cuda:0")`` under ``if torch.cuda.is_available():``,
    ``torch.device("cpu")`` otherwise, through a local name bound on each path): "cuda" when
    every one is CUDA, "maybe" when some are; None when a return is anything else (a
    parameter, another call: unknown is silent)."""
    function = same_file_function(facts, call.func, scope)
    inner = facts.scopes.scopes.get(function) if function is not None else None
    if function is None or inner is None:
        return None
    kinds: set[str | None] = set()
    for node in facts.own_returns(function):
        for value in _returned_values(facts, node.value, inner):
            kinds.add(_written_device(facts, value, inner, depth))
    return _either_device(kinds)


def _written_device(facts: FileFacts, value: ast.expr | None, scope: Scope, depth: int) -> str | None:
    """"cuda"/"maybe" as :func:`cuda_device_kind` says, "cpu" for another device written out,
    None for anything else."""
    return None if value is None else cuda_device_kind(facts, value, scope, depth + 1) or _cpu_device(facts, value, scope)


def _either_device(kinds: set[str | None]) -> str | None:
    """One of several devices (the arms of an ``if``, a function's returns): "cuda" when all are,
    "maybe" when some are and the rest are written out; None when one is unknown or none is CUDA."""
    if not kinds or None in kinds or kinds == {"cpu"}:
        return None
    return "cuda" if kinds == {"cuda"} else "maybe"


def _returned_values(facts: FileFacts, value: ast.expr | None, scope: Scope) -> list[ast.expr | None]:
    """What a ``return`` hands back: its expression, or each value a local name is assigned
    in the function (``device = torch.device("cuda:0")`` on one path, ``"cpu"`` on the other);
    [None] where the name is bound otherwise (a parameter, a loop)."""
    if not isinstance(value, ast.Name):
        return [value]
    found = facts.scopes.lookup(value.id, scope)
    if found is None or found[0] is not scope:
        return [value]
    return [b.value if b.kind == "assign" else None for b in found[1]]


def _cpu_device(facts: FileFacts, expr: ast.expr | None, scope: Scope) -> str | None:
    """"cpu" for a device written out that is not CUDA (``"cpu"``, ``torch.device("mps")``)."""
    if expr is None:
        return None
    expr, scope = follow(expr, scope, facts)
    if isinstance(expr, ast.Call) and facts.qualname(expr.func) == TORCH_DEVICE and len(expr.args) == 1:
        expr = expr.args[0]
    return "cpu" if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None


def passed_devices(facts: FileFacts, call: ast.Call, scope: Scope) -> dict[str, str]:
    """The arguments of ``call`` that are CUDA devices as this file resolves them, by position
    ("0") and keyword: "cuda" or "maybe" (what another file's callee copies to, its summary's
    :attr:`CallSummary.cuda_devices`)."""
    found: dict[str, str] = {}
    positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
    for key, expr in [*((str(i), a) for i, a in enumerate(positional)), *((k.arg, k.value) for k in call.keywords if k.arg)]:
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.JoinedStr, ast.IfExp, ast.BinOp)):
            kind = cuda_device_kind(facts, expr, scope)
            if kind is not None:
                found[key] = kind
    return found


def _parameter_kind(facts: FileFacts, expr: ast.Name, scope: Scope, depth: int) -> str | None:
    """A device handed in as a parameter: what every call of its function passes, in this file
    and in the project's other files (as each resolves it: :func:`passed_devices`), "maybe"
    when one of them passes a "cuda if available" device; None when a call passes anything
    else, or when the calls cannot all be read (unknown)."""
    name = expr.id
    found = facts.scopes.lookup(name, scope)
    if found is None:
        return None
    owner, bindings = found
    function = owner.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if sum(b.kind == "param" for b in bindings) != 1:
        return None
    # Each caller's argument is traced up its own callers: a parameter every function hands on
    # (a project's ``facts``) fans out at every level, so the same question recurs; answered once
    # per depth (the answer depends on the depth left), the work is bounded, the answers the same.
    memo: dict[tuple[int, str, int], str | None] = facts.memo("parameter_kinds")
    key = (id(function), name, depth)
    if key not in memo:
        memo[key] = _kind_from_calls(facts, expr, function, owner, bindings, depth)
    return memo[key]


def _kind_from_calls(facts: FileFacts, expr: ast.Name, function: ast.FunctionDef | ast.AsyncFunctionDef, owner: Scope,
                     bindings: list, depth: int) -> str | None:
    """:func:`_parameter_kind`'s answer for the parameter ``expr`` of ``function``."""
    name = expr.id
    rebound = _rebound_kinds(facts, bindings, name, owner, depth)
    if None in rebound:
        return None  # a parameter rebound only to an expression of itself (torch.device(device)) keeps its kind
    calls = function_calls(facts, function)
    if not calls.elsewhere.readable:
        return None  # other files' calls cannot all be read: what they pass is unknown
    here = [(call, facts.scopes.scope_of(call)) for call in calls.here]
    here = [(call, caller) for call, caller in here if not _never_runs(facts, call)] or here  # callers that never run decide only where no other caller does
    kinds = {cuda_device_kind(facts, argument, caller, depth + 1) if argument is not None else None
             for argument, caller in (_argument_for(call, function, name, facts, caller) for call, caller in here)}
    kinds |= _kinds_elsewhere(facts, expr, function, calls.elsewhere.calls, depth)
    if kinds:
        kinds |= rebound
    if not kinds or None in kinds:
        return None
    return "cuda" if kinds == {"cuda"} else "maybe"


def _rebound_kinds(facts: FileFacts, bindings: list, name: str, owner: Scope, depth: int) -> set[str | None]:
    """The device kinds a parameter is rebound to besides its own value: none for an
    expression of itself (``torch.device(device)``); "cuda" for ``device =
    torch.cuda.current_device()``; None (unknown) for anything else."""
    kinds: set[str | None] = set()
    for binding in bindings:
        if binding.kind == "param" or rebinds_itself(binding, name):
            continue
        value = binding.value if binding.kind == "assign" else None
        kinds.add(cuda_device_kind(facts, value, owner, depth + 1) if value is not None else None)
    return kinds


def _never_runs(facts: FileFacts, call: ast.Call) -> bool:
    """``call`` is made in a module-level function that nothing in the project calls or names
    (not handed on as ``target=f`` either): in view, it never runs, and what it passes decides
    nothing beside a caller that does run."""
    function = facts.scopes.enclosing_function(call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
        return False
    if not isinstance(facts.scopes.parents.get(function), ast.Module) or facts.usage.callers(function):
        return False
    if any(node.__class__ is ast.Name and node.id == function.name for node in facts.nodes):  # type: ignore[attr-defined]
        return False
    project = facts.project
    return project is None or not project.summarizing and not project.named_elsewhere(function.name)


def _kinds_elsewhere(facts: FileFacts, expr: ast.Name, function: ast.FunctionDef | ast.AsyncFunctionDef,
                     elsewhere: tuple[PassedArguments, ...], depth: int) -> set[str | None]:
    """What the calls of ``function`` in other project files pass for the parameter ``expr``
    names (None for a call whose value is not a CUDA device, or that leaves it at its default
    when that is none)."""
    position = parameter_position(function, expr.id)
    default = parameter_default(function, expr.id)
    kinds: set[str | None] = set()
    for arguments in elsewhere:
        passes = arguments.shape.passes(position, expr.id)
        if passes is False:  # left at its default
            kinds.add(cuda_device_kind(facts, default, facts.scopes.scope_of(default), depth + 1) if default is not None else None)
            continue
        key = expr.id if expr.id in arguments.shape.keywords else str(position)
        kinds.add(arguments.cuda_devices.get(key) if passes else None)
    return kinds


def rebinds_itself(binding, name: str) -> bool:
    """``device = torch.device(device)``: an assignment whose value reads the name it rebinds."""
    return binding.kind == "assign" and binding.value is not None and any(
        isinstance(node, ast.Name) and node.id == name for node in ast.walk(binding.value))


def _argument_for(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                  facts: FileFacts, caller: Scope) -> tuple[ast.expr | None, Scope]:
    """The expression ``call`` passes for parameter ``name`` (its default when it passes none)."""
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return keyword, caller
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if name in positional:
        index = positional.index(name)
        if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return None, caller
        if index < len(call.args):
            return call.args[index], caller
        defaults = function.args.defaults
        first_default = len(positional) - len(defaults)
        if index >= first_default:
            return defaults[index - first_default], facts.scopes.scope_of(function)
    return None, caller


def same_file_function(facts: FileFacts, func: ast.expr, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if not isinstance(func, ast.Name):
        return own_method(facts, func, scope)  # ``self.get_device()``
    found = facts.scopes.single_value(func.id, scope)
    node = found[1].node if found is not None else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _leading_text(expr: ast.Constant | ast.JoinedStr | ast.BinOp) -> str | None:
    """The text a string written out starts with: ``"cuda:0"``, ``f"cuda:{rank}"``'s
    ``"cuda:"``, ``"cuda:" + str(args.device)``'s ``"cuda:"``; None for anything else."""
    first: ast.expr | None = expr
    if isinstance(expr, ast.JoinedStr):
        first = expr.values[0] if expr.values else None
    while isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add):
        first = first.left
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _is_cuda_string(text: str | None) -> bool:
    return text is not None and (text == "cuda" or text.startswith("cuda:"))


def torch_alias(facts: FileFacts) -> str | None:
    """The local name ``torch`` is imported under, if any."""
    return next((local for local, full in facts.imports.items() if full == "torch"), None)
