"""Give every static finding one verdict from the results measured at run time.

A result pairs with a finding of the same code when the finding's line lies in
one of the result's anchors (the loader call's span, the lambda, the class).
A finding elsewhere in the same file (an argparse default, a sampler built a
few lines up) takes the results of its code measured in that file. Confirmed
results no finding claimed become findings of their own, marked runtime.
"""

from __future__ import annotations

import os

from dllint.findings import Finding
from dllint.probe.checks import codes_with_checks
from dllint.probe.results import NOT_REACHED, WHOLE_FILE, Anchor, Result, skipped


def _real(path: str) -> str:
    return os.path.realpath(path)


def _strongest(results: list[Result]) -> Result:
    return max(results, key=lambda result: result.judgment.verdict.rank)


def _matches(result: Result, finding: Finding) -> bool:
    return result.code == finding.code and any(
        anchor.path == _real(finding.path) and anchor.covers(finding.line) for anchor in result.anchors
    )


def _same_file(result: Result, finding: Finding) -> bool:
    return result.code == finding.code and any(anchor.path == _real(finding.path) for anchor in result.anchors)


def attach_verdicts(
    findings: list[Finding],
    results: list[Result],
    not_reached_reason: str,
    loader_spans: dict[int, Anchor] | None = None,
    loader_labels: dict[int, str] | None = None,
    construction_errors: dict[int, str] | None = None,
) -> tuple[list[Result], set[int]]:
    """Set ``probe`` on every finding; return the results no finding used, and the ids of those used.

    A finding inside a loader's call takes only results measured on that
    loader: another loader's measurement is no evidence about it. One in a
    call torch rejected for another reason (``construction_errors``) was never
    checked, and its verdict says which error masked it.
    """
    checked_codes = codes_with_checks()
    used: set[int] = set()
    errors = construction_errors or {}
    for finding in findings:
        candidates = results
        owners = [loader for loader, span in (loader_spans or {}).items()
                  if span.path == _real(finding.path) and span.covers(finding.line)]
        if owners:
            candidates = [result for result in results if result.loader in owners]
        paired = [result for result in candidates if _matches(result, finding)]
        if not paired and not owners:
            paired = [result for result in candidates if _same_file(result, finding)]
        if paired:
            chosen = _strongest(paired)
            used.update(id(result) for result in paired)
            finding.probe = chosen.probe_dict()
            label = loader_labels.get(chosen.loader) if loader_labels and chosen.loader is not None else None
            if label is not None:  # which loader the evidence was measured on
                finding.probe["measurements"] = {**finding.probe["measurements"], "loader": label}
            if chosen.judgment.confirmed and finding.config_keys:
                name_config_keys(finding)
        elif finding.code not in checked_codes:
            finding.probe = {"verdict": skipped(f"no runtime check for {finding.code}"), "evidence": "", "measurements": {}}
        elif masking := [errors[owner] for owner in owners if owner in errors]:
            finding.probe = {"verdict": NOT_REACHED, "measurements": {},
                             "evidence": f"masked: torch raised another error first on this call ({masking[0]}), "
                                         f"so it never checked what {finding.code} is about"}
        else:
            finding.probe = {"verdict": NOT_REACHED, "evidence": not_reached_reason, "measurements": {}}
    return [result for result in results if id(result) not in used], used


def name_config_keys(finding: Finding) -> None:
    """A confirmed finding whose values came from a config file says which key to change
    (the reported argument's first): ``change train_ds.persistent_workers in conf/train.yaml:4``."""
    assert finding.probe is not None
    changes = [f"{key.key} in {key.where()}" for key in finding.config_keys]
    finding.probe["change"] = changes
    also = f" (or {', '.join(changes[1:])})" if len(changes) > 1 else ""
    evidence = finding.probe.get("evidence") or ""
    finding.probe["evidence"] = f"{evidence}; change {changes[0]}{also}" if evidence else f"change {changes[0]}{also}"


def rule_names() -> dict[str, str]:
    """Each rule code's public name, from the rule catalog itself."""
    from dllint.rules import all_rules

    return {rule.code: rule.name for rule in all_rules()}


def runtime_findings(unclaimed: list[Result], names: dict[str, str] | None = None) -> list[Finding]:
    """Findings for problems only the run showed (confirmed, and no static finding claimed them)."""
    names = rule_names() if names is None else names
    findings: dict[tuple[str, str, int], Finding] = {}
    for result in unclaimed:
        if not result.judgment.confirmed or not result.anchors or result.measurements.get("advisory"):
            continue
        anchor = result.anchors[0]
        key = (result.code, anchor.path, anchor.first_line)
        if key in findings:
            continue
        path = os.path.relpath(anchor.path) if os.path.isabs(anchor.path) else anchor.path
        findings[key] = Finding(
            path=path,
            line=anchor.first_line,
            column=1,
            end_line=anchor.first_line if anchor.last_line >= WHOLE_FILE else anchor.last_line,
            end_column=1,
            code=result.code,
            name=names.get(result.code, ""),
            message=f"{result.code} seen at run time: {result.evidence}",
            source="runtime",
            probe=result.probe_dict(),
        )
    return sorted(findings.values(), key=lambda finding: finding.sort_key)
