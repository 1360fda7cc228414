"""The scope table, built in one pass over the shared walk: where each part of a def, class
and lambda is evaluated, and what it binds."""

from __future__ import annotations

import ast

from dllint.facts.scopes import ScopeTable
from dllint.facts.walk import walk, walk_with_parents

SOURCE = '''
import os as system
limit = 4

@decorate(limit)
def build(ds, n: Annotated[int, marker] = limit, *rest, key=lambda item: item[0], **options) -> Result:
    total = n + 1
    for index in range(total):
        pass
    squares = [value * value for value in ds]
    return total

class Holder(Base, metaclass=Meta, flag=limit):
    size = limit
    def method(self):
        return size
'''


def table():
    tree = ast.parse(SOURCE)
    return tree, ScopeTable(tree)


def names(scope):
    return {name: [b.kind for b in bindings] for name, bindings in scope.bindings.items()}


def test_walk_with_parents_is_walk_with_each_nodes_parent():
    tree = ast.parse(SOURCE)
    nodes, parent_index = walk_with_parents(tree)
    # ast.walk's order, without the Load/Store/Del singletons (read through ``node.ctx``)
    assert nodes == walk(tree) == [n for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
    assert parent_index[0] == -1
    for node, above in zip(nodes[1:], parent_index[1:]):
        assert node in list(ast.iter_child_nodes(nodes[above]))


def test_what_each_scope_binds():
    tree, scopes = table()
    assert names(scopes.module) == {"system": ["import"], "limit": ["assign"], "build": ["def"], "Holder": ["class"]}
    build = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert names(scopes.scopes[build]) == {
        "ds": ["param"], "n": ["param"], "rest": ["param"], "key": ["param"], "options": ["param"],
        "total": ["assign"], "index": ["other"], "squares": ["assign"],
    }
    holder = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert names(scopes.scopes[holder]) == {"size": ["assign"], "method": ["def"]}


def test_decorators_defaults_bases_and_class_keywords_run_in_the_enclosing_scope():
    tree, scopes = table()
    loads = {(load.id, scope.node.__class__.__name__) for scope in scopes.scopes.values() for load in scope.loads}
    assert ("decorate", "Module") in loads and ("limit", "Module") in loads
    assert ("Base", "Module") in loads and ("Meta", "Module") in loads
    assert ("item", "Lambda") in loads
    assert ("n", "FunctionDef") in loads and ("size", "FunctionDef") in loads
    build = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    default = build.args.defaults[0]
    assert scopes.parents[default] is build and scopes.scope_of(default) is scopes.module


def test_annotations_are_neither_recorded_nor_given_parents():
    tree, scopes = table()
    loaded = {load.id for scope in scopes.scopes.values() for load in scope.loads}
    assert not {"Annotated", "marker", "Result"} & loaded
    build = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert build.returns not in scopes.parents and build.args.args[1] not in scopes.parents
    assert scopes.parents[build.args] is build


def test_lookup_skips_class_bodies_from_methods():
    tree, scopes = table()
    holder = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    method = holder.body[1]
    load = method.body[0].value
    assert scopes.scope_of(load) is scopes.scopes[method]
    assert scopes.lookup("size", scopes.scope_of(load)) is None
