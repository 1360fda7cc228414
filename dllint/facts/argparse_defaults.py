"""``parser.add_argument("--num_workers", default=16)``: defaults by destination."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass
class ArgparseDefaults:
    """The file's argparse options, their defaults, and the names a parse_args() result is bound to."""

    defaults: dict[str, list[ast.expr]] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)  # dest -> the option as written (``--num_workers``)
    # names bound to a parse_args() result, plus the conventional ones
    namespaces: set[str] = field(default_factory=lambda: {"args"})
    # (receiver, attribute) of every ``X.NAME = ...`` and ``setattr(X, "NAME", ...)`` in the file
    assigned: set[tuple[str, str]] = field(default_factory=set)

    def default_for(self, dest: str) -> ast.expr | None:
        """The single default written for ``dest``; None when absent or ambiguous, or when the
        file rewrites it (``args.workers = args.workers // ngpus``): the value is then dynamic."""
        values = self.defaults.get(dest)
        if not values or self.rewritten(dest):
            return None
        first = ast.dump(values[0])
        return values[0] if all(ast.dump(v) == first for v in values[1:]) else None

    def destination(self, expr: ast.AST) -> str | None:
        """The option destination ``expr`` reads: ``args.NAME``, or ``args["NAME"]`` where the
        namespace was made a dict (``args = vars(parser.parse_args())``), ``args`` one of
        :attr:`namespaces`."""
        if isinstance(expr, ast.Attribute):
            receiver, dest = expr.value, expr.attr
        elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
            receiver, dest = expr.value, expr.slice.value
        else:
            return None
        return dest if isinstance(receiver, ast.Name) and receiver.id in self.namespaces else None

    def rewritten(self, dest: str) -> bool:
        return any(attr == dest and receiver in self.namespaces for receiver, attr in self.assigned)

    def add_assignment(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        """``args.NAME = ...``, ``args.NAME += ...``, ``a, args.NAME = ...``, ``args["NAME"] = ...``."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if target.__class__ is ast.Name:
                continue  # `x = ...`, most assignments: no attribute under it
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and isinstance(sub.ctx, ast.Store):
                    self.assigned.add((sub.value.id, sub.attr))
                elif isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and isinstance(sub.ctx, ast.Store) \
                        and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
                    self.assigned.add((sub.value.id, sub.slice.value))  # args["workers"] = ... (a vars() dict)

    def add_call(self, call: ast.Call) -> None:
        if isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) >= 2:
            receiver, name = call.args[0], call.args[1]
            if isinstance(receiver, ast.Name) and isinstance(name, ast.Constant) and isinstance(name.value, str):
                self.assigned.add((receiver.id, name.value))
            return
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"):
            return
        options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        dest_node = keywords.get("dest")
        if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
            dest = dest_node.value
        else:
            long_options = [o for o in options if o.startswith("--")]
            if not long_options:
                return
            dest = long_options[0][2:].replace("-", "_")
        default = keywords.get("default")
        if default is not None:
            self.defaults.setdefault(dest, []).append(default)
            long_options = [o for o in options if o.startswith("--")]
            self.options.setdefault(dest, (long_options or options or [f"--{dest}"])[0])

    def add_namespace(self, assign: ast.Assign) -> None:
        value = assign.value
        if isinstance(value, ast.Subscript):  # parser.parse_known_args()[0]
            value = value.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "vars" and len(value.args) == 1:
            value = value.args[0]  # vars(parser.parse_args()): read as args["NAME"]
        elif isinstance(value, ast.Attribute) and value.attr == "__dict__":
            value = value.value  # parser.parse_args().__dict__, the same dict
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in ("parse_args", "parse_known_args")
        ):
            for target in assign.targets:
                if isinstance(target, ast.Name):
                    self.namespaces.add(target.id)
                elif isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                    self.namespaces.add(target.elts[0].id)
