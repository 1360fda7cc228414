"""Where a function the loop calls builds a loader anew every pass (DL204, the tenth audit's
K15): the loader is built by a function called inside a loop, directly or through functions
that hand it back (``load_data()`` returning what ``load_testing()`` built), and each call
makes one pass over it, so every pass starts its workers again. :func:`rebuilding_call`
answers for a loader built in this file; :func:`rebuilt_at` for the value a call into another
module returns (recorded in the file's summary of the call, so that the module that builds
the loader can report it: transferlearning's DAAN)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from dllint.facts.flow.model import Move
from dllint.facts.loops import STATEMENT_LOOPS, loaded_names, names_bound_in_loop
from dllint.facts.values import argument_for

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Use
    from dllint.facts.loaders import LoaderCall


def rebuilding_call(facts: FileFacts, loader: LoaderCall) -> tuple[str, str, ast.Call] | None:
    """(the builder's name, the name of the function called, the call) where the function that
    builds ``loader`` is called (in this file) inside a loop, directly or through functions
    that hand the loader back (``load_data()`` returning what ``load_testing()`` built), and
    each call makes one pass over the loader it builds: in the call (tenth audit K15: a nested
    ``run_epoch()`` the epoch loop calls), or where the call hands it back inside the loop. None where the loader
    is built from what the loop rebinds (passed down the calls, or read from an enclosing
    scope), or where a function of the chain iterates it in a loop of its own (a whole
    training run per call)."""
    function = facts.scopes.enclosing_function(loader.node)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    uses = facts.loops.iterations(loader)
    if not uses or any(use.loops for use in uses):
        return None  # never iterated, or iterated more than once per construction (DL201's question)
    found = _rebuilt_per_pass(facts, uses, function, function, _inputs(facts, function, loader.node), ())
    return None if found is None else (function.name, *found)


MOST_HANDS = 4  # functions that hand the loader back before the looping call (load_data() -> load_testing())


def _rebuilt_per_pass(
    facts: FileFacts, uses: list[Use], builder: ast.AST | None, function: ast.FunctionDef | ast.AsyncFunctionDef,
    inputs: set[str], chain: tuple[ast.Call, ...],
) -> tuple[str, ast.Call] | None:
    """The call of ``function`` (reached from the builder through ``chain``, the calls that
    handed the loader back so far) that sits in a loop making one pass per call, or one up the
    chain of functions handing it back."""
    if _runs_epochs(facts, function) or len(chain) > MOST_HANDS:
        return None  # a whole training run per call: the loop around the call is over runs, not epochs
    bound = 1 if isinstance(facts.scopes.parents.get(function), ast.ClassDef) else 0  # a method: self
    for call in facts.usage.callers(function):
        found = _climb(facts, uses, builder, function.name, (*chain, call), _passed_names(function, call, inputs, bound))
        if found is not None:
            return found
    return None


def _climb(
    facts: FileFacts, uses: list[Use], builder: ast.AST | None, name: str, calls: tuple[ast.Call, ...], passed: set[str],
) -> tuple[str, ast.Call] | None:
    """(``name``, the call) where the chain's last call (of ``name``) sits in a loop that makes
    one pass per call and passes it nothing the loop rebinds (``passed``: the names the loader
    is built from, as the call's frame sees them); else what the function holding the call
    gives, when it hands the loader back to its own callers."""
    call = calls[-1]
    loops = [loop for loop in facts.usage.enclosing_loops(call, facts.scopes.scope_of(call)) if isinstance(loop, STATEMENT_LOOPS)]
    if loops:
        if all(_in_the_pass(facts, builder, calls, loops[-1], use) for use in uses) and not passed & names_bound_in_loop(loops[-1]):
            return name, call  # (not built from what this pass produced: the same loader each pass)
        return None
    outer = facts.scopes.enclosing_function(call)
    if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) and _handed_back(facts, builder, calls, outer, uses):
        return _rebuilt_per_pass(facts, uses, builder, outer, _followed(facts, outer, passed | _tested(facts, call)), calls)
    return None


def rebuilt_at(facts: FileFacts, call: ast.Call, uses: list[Use]) -> int:
    """The line of the call in a loop that builds the value ``call`` returns once per pass and
    makes one pass over it (``call`` itself, or a call of a function of this file that hands
    the value back: ``load_data()`` in the epoch loop, returning what
    ``data_loader.load_testing()`` built); 0 when there is none. ``uses``: the uses of the
    value, as :meth:`~dllint.facts.usage.UsageAnalysis.uses_of` gives them for ``call``.
    The callee is another module's, so every name the call reads counts as one the value is
    built from."""
    uses = [use._replace(via=(call, *use.via)) for use in uses]
    if not uses or not all(use.kind is Move.ITERATE for use in uses):
        return 0
    built = set(map(id, facts.usage.enclosing_loops(call, facts.scopes.scope_of(call))))
    if any(id(loop) not in built for use in uses for loop in use.loops):
        return 0  # iterated more than once per call
    found = _climb(facts, uses, None, "", (call,), loaded_names(call) | _tested(facts, call))
    return 0 if found is None else found[1].lineno


def _chain_depth(calls: tuple[ast.Call, ...], use: Use) -> int:
    """How many of ``calls`` (the builder's call first) the use's value went through, in order."""
    depth = 0
    while depth < len(calls) and depth < len(use.via) and use.via[depth] is calls[depth]:
        depth += 1
    return depth


def _settled(facts: FileFacts, builder: ast.AST | None, calls: tuple[ast.Call, ...], use: Use) -> bool:
    """``use`` happens inside a function of the chain, once per call of it: in the builder
    (directly or through a helper it calls), or in the function a call of the chain handed
    the loader back to."""
    depth = _chain_depth(calls, use)
    if depth == 0:
        return builder is not None and facts.contains(builder, use.via[0] if use.via else use.node)
    if depth == len(calls):
        return False  # handed back past the chain's last call
    after = use.via[depth] if len(use.via) > depth else use.node
    function = facts.scopes.enclosing_function(calls[depth - 1])
    return function is not None and facts.contains(function, after)


def _handed_back(
    facts: FileFacts, builder: ast.AST | None, calls: tuple[ast.Call, ...], outer: ast.FunctionDef | ast.AsyncFunctionDef, uses: list[Use],
) -> bool:
    """``outer`` (the function holding the chain's last call) hands the loader back to its own
    callers, and makes no other pass over it than once per call. Only a loader handed back is
    followed up: a function that is given a loader and iterates it is a run of its own, whatever
    loop calls it (a calibration per quantization method, not an epoch)."""
    callers = {id(call) for call in facts.usage.callers(outer)}
    handed = [
        _chain_depth(calls, use) == len(calls) and len(use.via) > len(calls) and id(use.via[len(calls)]) in callers
        for use in uses
    ]
    return any(handed) and all(up or _settled(facts, builder, calls, use) for up, use in zip(handed, uses))


def _in_the_pass(facts: FileFacts, builder: ast.AST | None, calls: tuple[ast.Call, ...], loop: ast.AST, use: Use) -> bool:
    """``use`` is a pass made by one call of the chain: inside it, or by the loop's own body on
    what the chain's last call hands back."""
    if _settled(facts, builder, calls, use):
        return True
    after = use.via[len(calls)] if len(use.via) > len(calls) else use.node
    return _chain_depth(calls, use) == len(calls) and facts.contains(loop, after)


def _runs_epochs(facts: FileFacts, function: ast.AST) -> bool:
    """``function`` repeats a pass over some loader of the file in a loop of its own (an epoch
    loop over its training loader: one call is a training run)."""
    return any(
        isinstance(loop, STATEMENT_LOOPS) and facts.contains(function, loop)
        for other in facts.loader_calls
        for use in facts.loops.iterations(other)
        for loop in use.loops
    )


def _inputs(facts: FileFacts, function: ast.AST, node: ast.AST) -> set[str]:
    """The names ``node`` is computed from, and those the ``if`` tests that decide whether it
    runs read (``if data_feats is None:``), followed through the assignments of ``function``
    (``data = self.train_dataset if split == "train" else ...`` gives ``split``)."""
    return _followed(facts, function, loaded_names(node) | _tested(facts, node))


def _tested(facts: FileFacts, node: ast.AST) -> set[str]:
    """The names the ``if`` tests that decide whether ``node`` runs read."""
    names: set[str] = set()
    for test in facts.usage.lookups.if_arms(node):
        names |= loaded_names(test.test)
    return names


def _followed(facts: FileFacts, function: ast.AST, names: set[str]) -> set[str]:
    """``names`` and the names their assignments in ``function`` are computed from, transitively."""
    scope = facts.scopes.scopes[function]
    names = set(names)
    todo = list(names)
    while todo:
        for binding in scope.bindings.get(todo.pop(), ()):
            if binding.kind in ("assign", "other"):
                new = loaded_names(binding.value if binding.value is not None else binding.node) - names
                names |= new
                todo += new
    return names


def _passed_names(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, inputs: set[str], bound: int) -> set[str]:
    """The names the loader's ``inputs`` take from the call: what it passes for the parameters
    among them (everything it passes, where a splat hides which), and the names the function
    reads from enclosing scopes (a closure over a name the loop rebinds)."""
    parameters = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    if function.args.vararg is not None:
        parameters.add(function.args.vararg.arg)
    if function.args.kwarg is not None:
        parameters.add(function.args.kwarg.arg)
    names = inputs - parameters
    for param in inputs & parameters:
        passed = argument_for(call, function, param, bound)
        if passed is None:
            return names | loaded_names(call)
        if isinstance(passed, ast.expr):
            names |= loaded_names(passed)
    return names
