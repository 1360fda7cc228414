"""The epoch loop of an inherited method (DL201, DL206: the tenth audit's K14): a base class (in
this file or another module) runs ``for epoch in ...: self._train_epoch(epoch)`` in ``train()``,
and the subclass defines ``_train_epoch``, which iterates the loader it stores. Python looks
``self._train_epoch`` up on the instance's class, so the base's loop repeats the subclass's
method as if the class had written ``train()`` itself (docs/rules-and-fixes.md, "What the
rules see": methods inherited from project base classes are the class's own).

Each class records, per method, the ``self.m(...)`` calls inside that method's own ``for`` or
``while`` loops (:func:`loop_calls`, also in its file's summary, :attr:`ClassSummary.loop_calls`).
A method ``m`` of a class is repeated by the first such loop along its bases (depth first, left
to right, as Python's MRO does for these hierarchies) whose method the class itself, or a class
between them in this file, does not override (an override replaces the base's loop). A loop in
this file is the loop itself; one in another module is a :class:`RemoteLoop` naming the
method. Only loops written in the calling method count (a base's ``fit`` calling
``self.run_epoch()`` outside a loop, repeated by its own callers, is not followed), and classes
between them in other modules are not checked for overrides.

A summary depends on its own file only, so a file summarized for another file's question (the
project's ``Trainer`` in ``trainer.py``, its base in ``base.py``, the loader built in
``train.py``) reads no base of another module: a pass it makes in such a class's method, not
repeated there, records the bases to ask instead (:func:`pending_bases`, in
:attr:`Effects.inherited`), and the project's answer to the asking file reads their summaries
(:func:`resolved`): the pass is per epoch when one of them loops over the method. Only the
answer for an argument (``Trainer(loader)``: ``parameter_effects``) reads them; a pass reached
another way (a dict entry handed on, a returned value) stays one pass there.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from dllint.facts.attributes import method_receiver
from dllint.facts.flow.model import RemoteLoop
from dllint.facts.imports import dotted_name
from dllint.facts.walk import walk_statements

if TYPE_CHECKING:
    from dllint.facts import FileFacts
    from dllint.facts.flow.model import Loop
    from dllint.facts.flow.records import ClassSummary, Effects

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
MAX_DEPTH = 8  # levels of same-file bases followed


def loop_calls(cls: ast.ClassDef) -> dict[str, list[str]]:
    """Method name -> the ``m`` of each ``self.m(...)`` it calls inside one of its own loops
    (``self`` its first parameter), for every method of ``cls`` that makes one."""
    found: dict[str, list[str]] = {}
    for method in cls.body:
        receiver = method_receiver(method)
        if receiver is None or not any(isinstance(n, LOOPS) for n in walk_statements(method)):
            continue  # (loops are statements: a method without one is not walked whole)
        called = sorted({call.func.attr for call, _ in _looped_self_calls(method, receiver)})  # type: ignore[attr-defined]
        if called:
            found[method.name] = called  # type: ignore[attr-defined]
    return found


def inherited_loops(facts: FileFacts, method: ast.AST) -> tuple[Loop, ...]:
    """The loops of an inherited method that repeat ``method`` (a method of a class of this
    file) through ``self.<its name>(...)``, outermost first; () when none is known (see the
    module's docstring)."""
    cls = facts.scopes.parents.get(method)
    if not (isinstance(method, FUNCTIONS) and isinstance(cls, ast.ClassDef) and method_receiver(method) is not None):
        return ()
    return _from_bases(facts, cls, method.name, _method_names(cls), 0)


def pending_bases(facts: FileFacts, node: ast.AST) -> list[list[Any]]:
    """For a pass at ``node`` in a method ``m`` of a module-level class of this file: one
    ``[base target, m, methods that hide a base's]`` for each base in another project module
    along its same-file bases (what :func:`resolved` asks of their summaries)."""
    method = facts.scopes.enclosing_function(node)
    cls = facts.scopes.parents.get(method) if method is not None else None
    if not (isinstance(method, FUNCTIONS) and isinstance(cls, ast.ClassDef) and method_receiver(method) is not None
            and facts.project is not None and isinstance(facts.scopes.parents.get(cls), ast.Module)):
        return []
    found: list[list[Any]] = []
    _other_bases(facts, cls, method.name, _method_names(cls), found, 0)
    return found


def _other_bases(facts: FileFacts, cls: ast.ClassDef, name: str, overridden: set[str], out: list[list[Any]], depth: int) -> None:
    for base in cls.bases:
        local = facts.classes.get(base.id) if isinstance(base, ast.Name) else None
        if local is not None and isinstance(facts.scopes.parents.get(local.node), ast.Module):
            if depth < MAX_DEPTH and not _in_class(local.node, name, overridden):
                _other_bases(facts, local.node, name, overridden | _method_names(local.node), out, depth + 1)
            continue
        target = facts.project.target_of(facts, base, facts.scopes.module) if facts.project is not None else None
        if target is not None:
            out.append([target, name, sorted(overridden)])


def resolved(effects: Effects, ancestors: Callable[[str], list[ClassSummary]]) -> Effects:
    """``effects`` made per epoch where one of its :attr:`Effects.inherited` bases (or their
    ancestors: ``ancestors`` reads them, from the summarized file's view) loops over the method
    in a method the classes below do not override."""
    if effects.per_epoch or not effects.iterations:
        return effects
    for target, name, overridden in effects.inherited:
        for ancestor in ancestors(target):
            if any(name in called and caller not in overridden for caller, called in ancestor.loop_calls.items()):
                return replace(effects, per_epoch=True)
    return effects


def _from_bases(facts: FileFacts, cls: ast.ClassDef, name: str, overridden: set[str], depth: int) -> tuple[Loop, ...]:
    """The first loop along ``cls``'s bases whose method calls ``self.<name>()`` and is not
    among ``overridden`` (the methods of the classes below it, in this file)."""
    for base in cls.bases:
        local = facts.classes.get(base.id) if isinstance(base, ast.Name) else None
        if local is not None and isinstance(facts.scopes.parents.get(local.node), ast.Module):
            found = _in_class(local.node, name, overridden)
            if not found and depth < MAX_DEPTH:
                found = _from_bases(facts, local.node, name, overridden | _method_names(local.node), depth + 1)
        else:
            found = _elsewhere(facts, base, name, overridden)
        if found:
            return found
    return ()


def _in_class(cls: ast.ClassDef, name: str, overridden: set[str]) -> tuple[Loop, ...]:
    """The loops around the first ``self.<name>(...)`` of a method of ``cls`` not overridden."""
    for method in cls.body:
        receiver = method_receiver(method)
        if receiver is None or method.name in overridden:  # type: ignore[attr-defined]
            continue
        for call, loops in _looped_self_calls(method, receiver):
            if call.func.attr == name:  # type: ignore[attr-defined]
                return loops
    return ()


def _elsewhere(facts: FileFacts, base: ast.expr, name: str, overridden: set[str]) -> tuple[Loop, ...]:
    """A loop of a class of another project module (``base`` or one of its ancestors) calling
    ``self.<name>()``: one remote loop naming its method."""
    if facts.project is None or facts.project.summarizing:
        return ()
    for ancestor in facts.project.class_ancestors(facts, base):
        for caller, called in ancestor.loop_calls.items():
            if name in called and caller not in overridden:
                return (RemoteLoop(f"{caller}() inherited from {dotted_name(base) or 'a base class'}"),)
    return ()


def _looped_self_calls(method: ast.AST, receiver: str) -> list[tuple[ast.Call, tuple[ast.AST, ...]]]:
    """Each ``receiver.m(...)`` call of ``method`` inside one of its loops, with those loops
    (outermost first); nested functions and classes are not the method's."""
    found: list[tuple[ast.Call, tuple[ast.AST, ...]]] = []

    def visit(node: ast.AST, loops: tuple[ast.AST, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
                continue
            inner = (*loops, node) if isinstance(node, LOOPS) and child in node.body else loops
            if inner and isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == receiver:
                found.append((child, inner))
            visit(child, inner)

    visit(method, ())
    return found


def _method_names(cls: ast.ClassDef) -> set[str]:
    return {s.name for s in cls.body if isinstance(s, FUNCTIONS)}

