"""Every Python program the script starts gets the file guard, whatever its flags or environment.

The guard normally travels through the environment: ``PYTHONPATH`` names
``dllint/probe/boot``, whose ``sitecustomize`` installs it. A child started with
``-E``/``-I`` (environment ignored), ``-S`` (no ``site``), or with an
environment that lost the probe's variables (``env={}``) would run unguarded.
So every way a process is started from Python (``subprocess`` and
``multiprocessing`` through ``_posixsubprocess.fork_exec``, ``os.exec*``,
``os.posix_spawn*``) is wrapped: when the program is a Python interpreter that
the environment would not guard, its command line is rewritten to

    python FLAGS -c BOOTSTRAP MODE TARGET ARGS...

which keeps the interpreter and its flags, installs the guard, and then runs
the original ``-c`` code, ``-m`` module, script or stdin as Python would
(``sys.argv`` and ``sys.path[0]`` as the original command line gives them).
The probe's variables (scratch, events, ``TMPDIR``, trackers) are put back in
an environment that lost them. Children the environment already guards are
started unchanged.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, NamedTuple

from dllint.probe.descendants import ROLE_ENV
from dllint.probe.guard import (
    EVENTS_ENV,
    PROTECTED_ENV,
    SCRATCH_ENV,
    TRACKER_ENVIRONMENT,
    replace_os_function,
    trusted_values,
)

BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The probe's variables a child must have (the runner sets them; see runner._child_environment).
PROBE_VARIABLES = (SCRATCH_ENV, EVENTS_ENV, PROTECTED_ENV, ROLE_ENV, "TMPDIR", *TRACKER_ENVIRONMENT)
BOOTSTRAP = (f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
             "from dllint.probe.interpreters import bootstrap; bootstrap()")
_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?[dmu]?(\.exe)?")
_ENVIRONMENT_FLAGS = set("EIS")  # flags under which PYTHONPATH or site (so sitecustomize) is not used
_FLAGS_WITH_ARGUMENT = set("WX")


class CommandLine(NamedTuple):
    """A Python command line, split: interpreter flags, how the program is given, the program, its args."""

    flags: list[str]
    mode: str | None  # "-c", "-m", "file", "-" (stdin), or None (interactive, --version, ...)
    target: str | None
    args: list[str]


def is_python(executable: Any) -> bool:
    try:
        path = os.fsdecode(executable)
    except TypeError:
        return False
    if _PYTHON_NAME.fullmatch(os.path.basename(path)):
        return True
    return os.path.isabs(path) and os.path.realpath(path) == os.path.realpath(sys.executable)


def split_command_line(argv: list[str]) -> CommandLine:
    flags: list[str] = []
    index = 1
    while index < len(argv):
        word = argv[index]
        if word == "-" or not word.startswith("-"):
            return CommandLine(flags, "-" if word == "-" else "file", word, argv[index + 1:])
        if word.startswith("--"):  # --version, --help, --check-hash-based-pycs MODE: left as they are
            return CommandLine(flags, None, None, argv[index:])
        for position, letter in enumerate(word[1:], 1):
            if letter in "cm":
                if position > 1:
                    flags.append(word[:position])
                rest = word[position + 1:]
                target = rest if rest else (argv[index + 1] if index + 1 < len(argv) else None)
                following = argv[index + (1 if rest else 2):]
                return CommandLine(flags, "-" + letter, target, following)
            if letter in _FLAGS_WITH_ARGUMENT:
                if position == len(word) - 1 and index + 1 < len(argv):
                    flags.extend([word, argv[index + 1]])
                    index += 1
                else:
                    flags.append(word)
                break
        else:
            flags.append(word)
        index += 1
    return CommandLine(flags, None, None, [])


def _ignores_environment(flags: list[str]) -> bool:
    letters = set()
    skip = False
    for flag in flags:
        if skip or not flag.startswith("-"):
            skip = False
            continue
        head = flag[1:]
        for letter in head:
            if letter in _FLAGS_WITH_ARGUMENT:
                skip = head.endswith(letter)
                break
            letters.add(letter)
    return bool(letters & _ENVIRONMENT_FLAGS)


def _guarded_by_environment(environment: dict[str, str]) -> bool:
    return SCRATCH_ENV in environment and BOOT_DIR in environment.get("PYTHONPATH", "").split(os.pathsep)


def probe_environment(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` with the probe's variables put back where it lost them, and the probe's
    own (scratch, events, dllint's pid) always as the probe set them (:func:`guard.trusted_values`):
    a script that changes them in ``os.environ`` or in a child's environment cannot point the
    child's guard at a file or directory of its own."""
    trusted = trusted_values()
    restored = dict(environment)
    if environment.get(SCRATCH_ENV) != trusted.get(SCRATCH_ENV, os.environ.get(SCRATCH_ENV)):
        restored.update({name: os.environ[name] for name in PROBE_VARIABLES if name in os.environ})
    restored.update(trusted)
    return environment if restored == environment else restored


def guarded_command(argv: list[Any], environment: dict[str, str]) -> tuple[list[Any], dict[str, str]] | None:
    """The command line and environment that start this Python child with the guard, or None when
    the environment guards it already (or the command line is not one to touch)."""
    if not (trusted_values() or os.environ.get(SCRATCH_ENV)) or not argv:
        return None
    restored = probe_environment(environment)
    words = [os.fsdecode(word) for word in argv]
    line = split_command_line(words)
    if _guarded_by_environment(restored) and not _ignores_environment(line.flags):
        return None if restored is environment else (list(argv), restored)
    if line.mode is None or line.target is None or line.target == BOOTSTRAP:
        return list(argv), restored  # interactive, --version, or rewritten already
    return [words[0], *line.flags, "-c", BOOTSTRAP, line.mode, line.target, *line.args], restored


def bootstrap() -> None:
    """In the rewritten child: install the guard, then run what the original command line named."""
    from dllint.probe.descendants import watch_loaders
    from dllint.probe.guard import install_from_environment

    sys.path.remove(PACKAGE_ROOT)
    sys.path.append(PACKAGE_ROOT)  # the user's modules first; dllint's own imports still resolve
    sys.dont_write_bytecode = True  # -E ignored PYTHONDONTWRITEBYTECODE: no __pycache__ in the user's tree
    install_from_environment()
    watch_loaders()
    install()
    mode, target, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    _run(mode, target, args)


def _run(mode: str, target: str, args: list[str]) -> None:
    import runpy

    import __main__

    if mode == "-m":
        sys.argv = [target, *args]
        runpy._run_module_as_main(target, alter_argv=True)  # type: ignore[attr-defined]  # what -m runs
        return
    if mode == "file":
        sys.argv = [target, *args]
        if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] == "":
            sys.path[0] = os.path.dirname(os.path.realpath(target))
        runpy.run_path(target, run_name="__main__")
        return
    sys.argv = [mode, *args]
    source, name = (sys.stdin.read(), "<stdin>") if mode == "-" else (target, "<string>")
    exec(compile(source, name, "exec"), __main__.__dict__)  # noqa: S102 - the user's own -c code, as python -c runs it


# -- the wrapped ways to start a process --------------------------------------------------------


def _environment_dict(env: Any) -> dict[str, str]:
    if env is None:
        return dict(os.environ)
    if isinstance(env, dict):
        return {os.fsdecode(key): os.fsdecode(value) for key, value in env.items()}
    pairs = (os.fsdecode(item).partition("=") for item in env)  # fork_exec's b"NAME=value" list
    return {key: value for key, _, value in pairs}


def _rewrite(executables: list[Any], argv: Any, env: Any) -> tuple[Any, Any]:
    current = _environment_dict(env)
    if any(is_python(executable) for executable in executables):
        changed = guarded_command(list(argv), current)
    else:  # any other program: the probe's own variables as the probe set them, for the Python it may start
        restored = probe_environment(current) if trusted_values() else current
        changed = None if restored is current else (list(argv), restored)
    if changed is None:
        return argv, env
    new_argv, environment = changed
    if env is None and environment == dict(os.environ):
        return new_argv, None
    if isinstance(env, (list, tuple)) or env is None and executables and isinstance(executables[0], bytes):
        return new_argv, [os.fsencode(f"{key}={value}") for key, value in environment.items()]
    return new_argv, environment


def _wrap_fork_exec(original: Any) -> Any:
    def fork_exec(args: Any, executables: Any, close_fds: Any, fds: Any, cwd: Any, env: Any, *rest: Any) -> Any:
        if args is not None:
            args, env = _rewrite(list(executables or [args[0]]), args, env)
        return original(args, executables, close_fds, fds, cwd, env, *rest)

    fork_exec._dllint_guarded = True  # type: ignore[attr-defined]
    return fork_exec


def _wrap_exec(original: Any, with_env: bool) -> Any:
    def exec_function(path: Any, argv: Any, *rest: Any, **kwargs: Any) -> Any:
        if with_env:
            env = rest[0] if rest else kwargs.pop("env")
            argv, env = _rewrite([path], argv, env)
            return original(path, argv, env, *rest[1:], **kwargs)
        argv, env = _rewrite([path], argv, None)
        if env is None:
            return original(path, argv, *rest, **kwargs)
        return os.execve(path, argv, env)  # the environment had to change

    exec_function._dllint_guarded = True  # type: ignore[attr-defined]
    return exec_function


def install() -> None:
    """Wrap every way this process can start a program (once)."""
    try:
        import _posixsubprocess
    except ImportError:  # Windows: subprocess uses CreateProcess (not covered)
        _posixsubprocess = None  # type: ignore[assignment]
    if _posixsubprocess is not None and not getattr(_posixsubprocess.fork_exec, "_dllint_guarded", False):
        _posixsubprocess.fork_exec = _wrap_fork_exec(_posixsubprocess.fork_exec)
        if "subprocess" in sys.modules:
            sys.modules["subprocess"]._fork_exec = _posixsubprocess.fork_exec  # type: ignore[attr-defined]  # bound at its import
    for name, with_env in (("execv", False), ("execve", True), ("posix_spawn", True), ("posix_spawnp", True)):
        original = getattr(os, name, None)
        if original is not None and not getattr(original, "_dllint_guarded", False):
            replace_os_function(name, _wrap_exec(original, with_env))
