"""dllint's exit codes, in one place (the CLI, the fix modes and the probe all return these)."""

CLEAN = 0  # nothing to report (or --exit-zero; --fix-only: every fix applied)
FINDINGS = 1  # findings remain (--diff: there is a diff; --fix-only: a fix could not be applied)
ERROR = 2  # a usage or configuration error, or an internal error in dllint
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)
