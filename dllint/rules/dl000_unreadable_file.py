from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from dllint.findings import Finding
from dllint.rules import Rule

if TYPE_CHECKING:
    from dllint.facts import FileFacts


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file that cannot be read, decoded or parsed, or a path that does not exist.
    The message names the error and where it is (line and column).

    ## Why is this bad?
    dllint cannot check a file it cannot parse, and neither can Python run it. The run goes
    on with the other files; this finding makes sure the skipped file is not silently
    counted as clean.

    ## Example
    ```python
    loader = DataLoader(ds, num_workers=4
    ```

    ## Use instead
    ```python
    loader = DataLoader(ds, num_workers=4)
    ```

    ## Fix safety
    No fix: the cause is in the file itself (a syntax error, a wrong encoding).

    ## References
    - [PEP 263: source code encodings](https://peps.python.org/pep-0263/)
    """

    code = "DL000"
    name = "unreadable-file"
    summary = "file cannot be read or parsed"
    triggers = ()
    # The engine reports DL000 itself; these examples are checked by the engine tests.
    valid = ("from torch.utils.data import DataLoader\nloader = DataLoader([1, 2])\n",)
    invalid = ("from torch.utils.data import DataLoader\nloader = DataLoader([1, 2]\n",)

    def check(self, facts: FileFacts) -> Iterator[Finding]:
        return iter(())
