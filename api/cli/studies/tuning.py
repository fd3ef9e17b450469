"""``playtester tune``: a search over a game's options for the fairest variant, each trial a
batch, with Optuna choosing the next one.

A study file's ``[tune]`` table names a base batch (its game, agents, players and matches per
trial) and the option searched. First of all Les Alvéoles' ``layout``:

- ``space = "permute"`` keeps the base layout's multiset of square values and places them anew.
  Optuna proposes one number in [0, 1) per cell (per pair of cells with ``symmetry =
  "half_turn"``, which keeps the layout symmetric under a half-turn as the classic one is);
  the cells sorted by their numbers take the values sorted from the largest (the random-key
  encoding of a permutation, which suits both TPE and CMA-ES).
- ``space = "choices"`` with ``choices = [...]`` picks among declared values (named layouts or
  grids, for any option).

The target is the smallest absolute first-player advantage. A trial's batch is checked as it
runs (every ``check_every`` matches): once its 95 % interval lies wholly outside
±``prune_outside`` the variant is clearly unfair, the batch is cancelled and the trial pruned.
Trials live in Optuna's storage beside the project's database
(:func:`storage.tuning.optuna_storage`), and trial batches carry content keys like every study
batch, so an interrupted search resumes.
The best variant is then confirmed by a batch of ``confirm_matches`` matches, beside the base
variant confirmed the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from api.cli.studies.definition import Study, StudyBatch, StudyError, _key_line
from api.cli.studies.plan import PlannedBatch

SPACES = ("permute", "choices")
SYMMETRIES = ("half_turn", "none")
SAMPLERS = ("tpe", "cmaes")
TUNE_KEYS = frozenset(
    {
        "batch",
        "option",
        "space",
        "symmetry",
        "choices",
        "trials",
        "sampler",
        "seed",
        "prune_outside",
        "check_every",
        "confirm_matches",
    }
)
CELLS = 64


@dataclass(frozen=True)
class TuneSpec:
    batch: str
    option: str
    space: str
    symmetry: str
    choices: tuple[Any, ...]
    trials: int
    sampler: str
    seed: int
    prune_outside: float
    check_every: int
    confirm_matches: int


def _number(
    study: Study, line: int, raw: Mapping[str, Any], key: str, default: float, kind: type
) -> Any:
    value = raw.get(key, default)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0 or (kind is int and value != int(value)):
        where = _key_line(study.text, line, key) or line
        raise StudyError(
            study.path, where, f"tune.{key}", f"{value!r}: give a positive {kind.__name__}"
        )
    return kind(value)


def _choice(
    study: Study, line: int, raw: Mapping[str, Any], key: str, allowed: Sequence[str]
) -> str:
    value = raw.get(key, allowed[0])
    if value not in allowed:
        where = _key_line(study.text, line, key) or line
        raise StudyError(
            study.path, where, f"tune.{key}", f"{value!r}; use one of {', '.join(allowed)}"
        )
    return str(value)


def parse_tune(study: Study) -> TuneSpec:
    """The study's ``[tune]`` table, checked; ``StudyError`` names the line and field."""
    raw = study.tune
    line = next(
        (n for n, text in enumerate(study.text.splitlines(), 1) if text.strip() == "[tune]"), 1
    )
    if raw is None:
        raise StudyError(study.path, 1, "tune", "this study has no [tune] table")
    unknown = sorted(set(raw) - TUNE_KEYS)
    if unknown:
        where = _key_line(study.text, line, unknown[0]) or line
        raise StudyError(
            study.path,
            where,
            f"tune.{unknown[0]}",
            f"unknown key; use one of {', '.join(sorted(TUNE_KEYS))}",
        )
    batch = raw.get("batch")
    if batch not in {b.name for b in study.batches}:
        raise StudyError(
            study.path,
            _key_line(study.text, line, "batch") or line,
            "tune.batch",
            f"no batch named {batch!r}",
        )
    space = _choice(study, line, raw, "space", SPACES)
    choices = raw.get("choices", [])
    if space == "choices" and (not isinstance(choices, list) or len(choices) < 2):
        raise StudyError(
            study.path,
            _key_line(study.text, line, "choices") or line,
            "tune.choices",
            "give at least two values to choose among",
        )
    option = raw.get("option", "layout")
    if not isinstance(option, str) or not option:
        raise StudyError(
            study.path,
            _key_line(study.text, line, "option") or line,
            "tune.option",
            "name the option searched",
        )
    spec = TuneSpec(
        batch=str(batch),
        option=option,
        space=space,
        symmetry=_choice(study, line, raw, "symmetry", SYMMETRIES),
        choices=tuple(choices),
        trials=_number(study, line, raw, "trials", 30, int),
        sampler=_choice(study, line, raw, "sampler", SAMPLERS),
        seed=_number(study, line, raw, "seed", 1, int),
        prune_outside=_number(study, line, raw, "prune_outside", 0.05, float),
        check_every=_number(study, line, raw, "check_every", 200, int),
        confirm_matches=_number(study, line, raw, "confirm_matches", 10_000, int),
    )
    if spec.space == "permute" and spec.option != "layout":
        raise StudyError(
            study.path,
            _key_line(study.text, line, "space") or line,
            "tune.space",
            "permute places the values of a `layout`; use choices for other options",
        )
    return spec


def key_count(spec: TuneSpec) -> int:
    """How many numbers Optuna proposes per trial in the ``permute`` space."""
    return CELLS // 2 if spec.symmetry == "half_turn" else CELLS


def decode_layout(keys: Sequence[float], values: Sequence[int], symmetry: str) -> list[list[int]]:
    """The layout (8 rows of 8, row 8 first) that places ``values`` (64 square values in any
    order) by the random keys ``keys``: the cell with the smallest key takes the largest value.

    With ``half_turn`` there is one key per pair of cells (i, 63 − i), which take equal values,
    so every value must occur an even number of times."""
    ordered = sorted(values, reverse=True)
    grid = [0] * CELLS
    if symmetry == "half_turn":
        pairs = ordered[::2]
        if ordered[1::2] != pairs:
            raise ValueError(
                "a half-turn symmetric layout needs every value an even number of times"
            )
        if len(keys) != CELLS // 2:
            raise ValueError(f"half-turn layouts take {CELLS // 2} keys, not {len(keys)}")
        for rank, cell in enumerate(sorted(range(CELLS // 2), key=lambda i: (keys[i], i))):
            grid[cell] = grid[CELLS - 1 - cell] = pairs[rank]
    else:
        if len(keys) != CELLS:
            raise ValueError(f"layouts take {CELLS} keys, not {len(keys)}")
        for rank, cell in enumerate(sorted(range(CELLS), key=lambda i: (keys[i], i))):
            grid[cell] = ordered[rank]
    return [grid[r * 8 : (r + 1) * 8] for r in range(8)]


def clearly_unfair(first_player: Mapping[str, Any], margin: float) -> bool:
    """Whether a first-player advantage's 95 % interval lies wholly outside ±``margin``."""
    low, high = first_player.get("ci_low"), first_player.get("ci_high")
    return low is not None and high is not None and (low > margin or high < -margin)


@dataclass(frozen=True)
class TrialOutcome:
    batch_id: str
    report: dict[str, Any]
    stopped: bool
    """Cancelled as clearly unfair before its last match."""


Runner = Callable[[PlannedBatch, Callable[[dict[str, Any]], bool]], TrialOutcome]
"""Plays a trial's batch (here or on a server), calling ``should_stop(report)`` every
``check_every`` matches; cancels the batch when it answers true."""


def trial_batch(
    base: StudyBatch, spec: TuneSpec, name: str, value: Any, matches: int | None = None
) -> StudyBatch:
    """The base batch with the searched option set to ``value`` (and ``matches`` when given);
    no seed, so each variant gets its own, derived from its definition."""
    keys = {k: v for k, v in base.keys.items() if k != "seed"}
    keys["options"] = {**base.keys.get("options", {}), spec.option: value}
    if matches is not None:
        keys["matches"] = matches
    return replace(base, name=name, keys=keys)
