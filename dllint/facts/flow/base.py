"""What the flow engine knows of the calls every file may make (builtins that iterate, wrap
or only look at a value; the wrappers of well-known libraries) and how far it follows a value
(:data:`MAX_CALL_DEPTH`, :data:`MAX_STEPS`)."""

# Builtins that consume an iterable on the spot.
ITERATING_BUILTINS = frozenset({"iter", "list", "tuple", "sorted", "set", "sum", "any", "all", "min", "max", "dict"})
# Calls that wrap an iterable and hand back something that iterates it.
WRAPPING_BUILTINS = frozenset({"enumerate", "zip", "map", "filter", "reversed"})
WRAPPING_QUALNAMES = frozenset(
    {
        "tqdm.tqdm",
        "tqdm.auto.tqdm",
        "tqdm.notebook.tqdm",
        "tqdm.std.tqdm",
        "itertools.islice",
        "itertools.chain",
        "itertools.cycle",
        "rich.progress.track",
    }
)
# Builtins that look at a value without iterating it.
NEUTRAL_BUILTINS = frozenset(
    {"len", "print", "isinstance", "hasattr", "getattr", "type", "id", "repr", "str", "vars", "callable", "setattr"}
)
MAX_CALL_DEPTH = 6
MAX_STEPS = 2000  # flow steps for one question; real code needs a few dozen
