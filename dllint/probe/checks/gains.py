"""What the time-based checks share: savings in seconds, the floor below which a saving does
not matter, and the noise of repeated, interleaved measurements (not a check: no ``CODES``).

**Savings.** A verdict about time says what it saves per epoch and over the run. Batches per
epoch come from ``len(loader)`` (unknown for an ``IterableDataset``: per batch only); epochs
from the script's own arguments (``--epochs 3``, ``--num-epochs=3``, ``--max-epochs``) or an
``args.epochs`` / module-level ``EPOCHS`` in the script's globals, else per epoch only.

**The floor.** A saving matters when it is at least :data:`MIN_EPOCH_SAVING_S` (5 ms) per
epoch and at least :data:`MIN_EPOCH_FRACTION` (1%) of the measured epoch; a saving counted
per batch must also be at least :data:`MIN_BATCH_SAVING_S` (50 µs) per batch, 1% of even a
fast 5 ms training step (with no epoch length known, that alone decides). Below it a finding is
``not confirmed (saves 10 µs per batch)``.

**Noise.** Variants are measured interleaved (A B A B ..., so that a machine's load changing
over the run hits both alike) and compared round by round: the gain is the ratio of the
medians (as the report shows them), the spread the range of the paired round-by-round ratios
relative to their median where that is above 1 (the highest and lowest left out from 5 rounds on),
so that it does not grow with the gain. A comparison is decided when the spread
is within :data:`NOISE_FLOOR` (5%) or smaller than the gain; otherwise the verdict is
``inconclusive (spread 35% > gain 11%)``.
"""

from __future__ import annotations

import os
import re
import statistics
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dllint.probe.context import ProbeContext
    from dllint.probe.site import LoaderSite

MIN_EPOCH_SAVING_S = 0.005
MIN_EPOCH_FRACTION = 0.01
MIN_BATCH_SAVING_S = 50e-6
NOISE_FLOOR = 0.05
TRIM_FROM_ROUNDS = 5

EPOCH_NAMES = ("epochs", "num_epochs", "n_epochs", "max_epochs", "nepochs")
_EPOCH_OPTION = re.compile(r"^--(?:num[-_]|n[-_]|max[-_])?epochs(?:=(\d+))?$")


@dataclass(frozen=True)
class RunLength:
    """How long the script's run is, where its own values say."""

    batches_per_epoch: int | None
    epochs: int | None


def script_epochs(argv: list[str], main_globals: dict[str, Any]) -> int | None:
    """The script's epoch count: ``--epochs N`` in its arguments, else ``args.epochs`` or ``EPOCHS``."""
    for index, argument in enumerate(argv):
        match = _EPOCH_OPTION.match(argument)
        if not match:
            continue
        value = match.group(1) or (argv[index + 1] if index + 1 < len(argv) else "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    for name, value in main_globals.items():
        candidates = [getattr(value, attribute, None) for attribute in EPOCH_NAMES] if name == "args" else [
            value] if name.lower() in EPOCH_NAMES else []
        for candidate in candidates:
            if isinstance(candidate, int) and not isinstance(candidate, bool) and candidate > 0:
                return candidate
    return None


def run_length(site: LoaderSite, ctx: ProbeContext) -> RunLength:
    try:
        batches = len(site.loader) if site.loader is not None else None
    except TypeError:  # an IterableDataset without __len__
        batches = None
    return RunLength(batches if batches else None, script_epochs(sys.argv[1:], ctx.main_globals))


def seconds(value: float) -> str:
    """A duration the way a person reads it: ``1.3 s``, ``25 ms``, ``10 µs``."""
    magnitude = abs(value)
    if magnitude >= 1:
        return f"{value:.1f} s"
    if magnitude >= 0.001:
        return f"{value * 1000:.0f} ms" if magnitude >= 0.01 else f"{value * 1000:.1f} ms"
    return f"{value * 1e6:.0f} µs"


@dataclass(frozen=True)
class Saving:
    """A time saving: per batch and/or per epoch, over the run where its length is known.

    ``epoch_s`` is the epoch's measured (or estimated) length, for the floor;
    ``paid_epochs_skip_first``: the first epoch pays the cost anyway (a worker start).
    """

    per_epoch_s: float | None
    run: RunLength
    per_batch_s: float | None = None
    epoch_s: float | None = None
    paid_epochs_skip_first: bool = False

    @classmethod
    def from_batch(cls, per_batch_s: float, run: RunLength, batch_s: float | None = None) -> Saving:
        epochs = run.batches_per_epoch
        return cls(per_batch_s * epochs if epochs else None, run, per_batch_s,
                   batch_s * epochs if batch_s is not None and epochs else None)

    @property
    def over_run_s(self) -> float | None:
        if self.per_epoch_s is None or self.run.epochs is None:
            return None
        paid = self.run.epochs - 1 if self.paid_epochs_skip_first else self.run.epochs
        return self.per_epoch_s * max(paid, 0)

    @property
    def material(self) -> bool:
        if self.per_batch_s is not None and self.per_batch_s < MIN_BATCH_SAVING_S:
            return False  # under 1% of even a fast (5 ms) training step, however many batches
        if self.per_epoch_s is not None:
            floor = max(MIN_EPOCH_SAVING_S, MIN_EPOCH_FRACTION * (self.epoch_s or 0.0))
            return self.per_epoch_s >= floor
        return self.per_batch_s is not None and self.per_batch_s >= MIN_BATCH_SAVING_S

    def describe(self) -> str:
        """``saves 440 ms per epoch, 1.3 s over 4 epochs`` (per batch too where counted per batch)."""
        parts = [] if self.per_batch_s is None else [f"{seconds(self.per_batch_s)} per batch"]
        if self.per_epoch_s is not None:
            parts.append(f"{seconds(self.per_epoch_s)} per epoch")
        if self.over_run_s is not None:
            parts.append(f"{seconds(self.over_run_s)} over {self.run.epochs} epochs")
        return "saves " + ", ".join(parts)

    def short(self) -> str:
        """The one figure a ``not confirmed (...)`` verdict quotes: per batch where counted so."""
        if self.per_batch_s is not None:
            return f"saves {seconds(self.per_batch_s)} per batch"
        return f"saves {seconds(self.per_epoch_s or 0.0)} per epoch"

    def measurements(self) -> dict[str, Any]:
        return {
            "saving_per_batch_s": self.per_batch_s,
            "saving_per_epoch_s": self.per_epoch_s,
            "saving_over_run_s": self.over_run_s,
            "batches_per_epoch": self.run.batches_per_epoch,
            "epochs": self.run.epochs,
            "epoch_s": self.epoch_s,
            "saving_material": self.material,
        }


@dataclass(frozen=True)
class Comparison:
    """B against A over interleaved rounds: ``gain`` (B/A - 1, of the medians) and ``spread``."""

    gain: float
    spread: float
    rounds: int

    @property
    def decided(self) -> bool:
        return self.spread <= NOISE_FLOOR or abs(self.gain) > self.spread

    @property
    def beyond_noise(self) -> bool:
        """B is better than A by more than the noise (and the 5% floor)."""
        return self.gain > max(NOISE_FLOOR, self.spread)


def compare(first: list[float], second: list[float]) -> Comparison | None:
    """Round-by-round ratios of ``second`` to ``first`` (rates, or seconds inverted by the caller)."""
    ratios = [b / a for a, b in zip(first, second) if a > 0]
    if not ratios or statistics.median(first) <= 0:
        return None
    # the gain as the medians the report shows say it; the spread from the pairs, where a load
    # that changed between rounds weighs on both sides alike
    gain = statistics.median(second[: len(ratios)]) / statistics.median(first[: len(ratios)]) - 1
    kept = sorted(ratios)[1:-1] if len(ratios) >= TRIM_FROM_ROUNDS else ratios
    # Relative to the typical ratio where it is above 1: rounds at 11.7x, 6.1x and 4.9x are a spread of
    # 111%, not of 680% (in absolute units the spread grew with the gain, and a sixfold gap read as
    # noise). Ratios below 1 (a time that shrinks) stay in absolute units: bounded by 0, they cannot
    # grow with the gain, and relative to a ratio near 0 any noise would look huge.
    return Comparison(gain, (max(kept) - min(kept)) / max(1.0, statistics.median(kept)), len(ratios))


def load_average() -> list[float] | None:
    """The machine's 1, 5 and 15-minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None
