"""Removing and setting a call's arguments without disturbing its layout or comments."""

from __future__ import annotations

from typing import Sequence, cast

import libcst as cst

from dllint.facts.loaders import POSITIONAL_PARAMS
from dllint.findings import Finding, RemoveArguments, SetArgument
from dllint.fixes import FixContext, FixUnavailable, edit_of


def argument_name(call: cst.Call, arg: cst.Arg, params: Sequence[str] = POSITIONAL_PARAMS) -> str | None:
    """The parameter an argument binds: its keyword, or its position in ``params``."""
    if arg.keyword is not None:
        return arg.keyword.value
    if arg.star:
        return None
    positional = [a for a in call.args if a.keyword is None]
    index = positional.index(arg)
    if any(a.star for a in positional[: index + 1]):
        return None
    return params[index] if index < len(params) else None


def enclosing_call(ctx: FixContext, finding: Finding) -> tuple[cst.Call, cst.Arg]:
    """The call and the argument a finding reports (at ``name=value`` or a positional value)."""
    for node in ctx.nodes_at(finding, cst.Arg, cst.BaseExpression):
        arg = node if isinstance(node, cst.Arg) else ctx.parent(node)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(call, cst.Call) and isinstance(arg, cst.Arg):
            return call, arg
    raise FixUnavailable(f"no call argument at {finding.line}:{finding.column}")


def remove_arguments(ctx: FixContext, call: cst.Call, arg: cst.Arg, names: Sequence[str]) -> None:
    """Record the removal of the arguments ``names`` from ``call`` (claiming only ``arg``'s span,
    so that several removals from one call compose in one pass)."""
    # (the transform is handed the call, updated)
    ctx.replace(call, lambda updated: _without(cast(cst.Call, updated), set(names)), claim=arg)


def _without(call: cst.Call, names: set[str]) -> cst.Call:
    args = list(call.args)
    keep = [a for a in args if argument_name(call, a) not in names]
    if len(keep) == len(args):
        return call
    removed_positional = [i for i, a in enumerate(args) if a not in keep and a.keyword is None]
    if removed_positional:
        # Later positional arguments would shift onto the wrong parameters: name them instead.
        first = removed_positional[0]
        for i in range(first + 1, len(args)):
            if args[i] in keep and args[i].keyword is None:
                name = argument_name(call, args[i])
                if name is None:
                    raise FixUnavailable("cannot re-bind the positional arguments after the removed one")
                args[i] = args[i].with_changes(keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                keep[keep.index(call.args[i])] = args[i]
    result: list[cst.Arg] = []
    for i, arg in enumerate(args):
        if arg in keep:
            result.append(arg)
            continue
        if not result:
            continue  # removing the first argument: the next one simply moves up
        previous = result[-1]
        later = [a for a in args[i + 1 :] if a in keep]
        if later:
            result[-1] = previous.with_changes(comma=_joined_comma(previous.comma, arg.comma))
        else:
            result[-1] = _new_last(previous, arg)
    return call.with_changes(args=result)


def _joined_comma(previous, removed):
    """The comma after ``previous`` once the argument after it is gone: its own trailing comment,
    then whatever led from the removed argument to the next (dropping what described the removed one)."""
    if not isinstance(previous, cst.Comma) or not isinstance(removed, cst.Comma):
        return previous
    before, after = previous.whitespace_after, removed.whitespace_after
    if isinstance(before, cst.ParenthesizedWhitespace) and isinstance(after, cst.ParenthesizedWhitespace):
        return previous.with_changes(whitespace_after=after.with_changes(first_line=before.first_line))
    return previous


def _new_last(previous: cst.Arg, removed: cst.Arg) -> cst.Arg:
    """The argument before the removed last one takes over the removed one's ending: its trailing
    comma (or none) and the whitespace before ``)``, keeping its own trailing comment."""
    own = previous.comma.whitespace_after if isinstance(previous.comma, cst.Comma) else None
    own_line = own.first_line if isinstance(own, cst.ParenthesizedWhitespace) else None
    if isinstance(removed.comma, cst.Comma):
        after = removed.comma.whitespace_after
        if own_line is not None and isinstance(after, cst.ParenthesizedWhitespace):
            after = after.with_changes(first_line=own_line)
        comma = removed.comma.with_changes(whitespace_after=after) if own_line is not None else removed.comma
        return previous.with_changes(comma=comma)
    closing = removed.whitespace_after_arg
    if own_line is not None and own_line.comment is not None:
        if isinstance(closing, cst.ParenthesizedWhitespace) and closing.first_line.comment is None:
            # `a,  # note` / `b` / `)`: the note stays on a's line, now the last one.
            return previous.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=closing.with_changes(first_line=own_line))
        # `a,  # note` / `b)`: keep the comma, so the note keeps its line break.
        line_break = cst.ParenthesizedWhitespace(first_line=own_line, indent=True, last_line=closing if isinstance(closing, cst.SimpleWhitespace) else cst.SimpleWhitespace(""))
        # (own_line is set only from previous's Comma)
        return previous.with_changes(comma=previous.comma.with_changes(whitespace_after=line_break))  # type: ignore[union-attr]
    return previous.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=closing)


def set_argument(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``name=value`` in ``call``: the existing keyword's value replaced, or a new keyword appended
    in the call's own layout (same line, or one argument per line with the same indentation)."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if argument_name(call, arg) == name:  # as a keyword, or positionally
            args[i] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    new = cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        separator = call.whitespace_before_args
    if isinstance(separator, cst.ParenthesizedWhitespace):
        # Same line break and indentation as before the last argument, without its comments.
        own_line = last.comma.whitespace_after.first_line if isinstance(last.comma, cst.Comma) and isinstance(
            last.comma.whitespace_after, cst.ParenthesizedWhitespace
        ) else cst.TrailingWhitespace()
        separator = separator.with_changes(first_line=own_line, empty_lines=[])
    old_comma = last.comma
    whitespace_before = old_comma.whitespace_before if isinstance(old_comma, cst.Comma) else cst.SimpleWhitespace("")
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_before=whitespace_before, whitespace_after=separator))
    if isinstance(old_comma, cst.Comma) and isinstance(old_comma.whitespace_after, cst.ParenthesizedWhitespace):
        # The last argument's own comment stays on its line, not on the new one.
        old_comma = old_comma.with_changes(whitespace_after=old_comma.whitespace_after.with_changes(first_line=cst.TrailingWhitespace()))
    args.append(new.with_changes(comma=old_comma, whitespace_after_arg=last.whitespace_after_arg))
    args[-2] = args[-2].with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
    return call.with_changes(args=args)


def remove_reported_argument(ctx: FixContext, finding: Finding) -> None:
    """The fix of DL001-DL006: remove the arguments the fix's :class:`RemoveArguments` names."""
    names = edit_of(finding, RemoveArguments).names
    call, arg = enclosing_call(ctx, finding)
    if argument_name(call, arg) not in names:
        raise FixUnavailable(f"the argument at {finding.line}:{finding.column} is not {', '.join(names)}")
    remove_arguments(ctx, call, arg, names)


def set_reported_argument(ctx: FixContext, finding: Finding, *, at_argument: bool = False) -> None:
    """The fix's :class:`SetArgument` on the reported loader call (DL108, DL201, DL206) or,
    ``at_argument``, on the call whose argument is reported (DL001, DL002)."""
    from dllint.fixes.layout import wrap_to_fit

    setting = edit_of(finding, SetArgument)
    call = enclosing_call(ctx, finding)[0] if at_argument else ctx.node_at(finding, cst.Call)
    ctx.replace(call, wrap_to_fit(ctx, call, set_argument(call, setting.name, cst.parse_expression(setting.value))))
