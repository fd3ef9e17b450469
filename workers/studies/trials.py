"""A ``tune`` search's finished trials as a file (``results/<study>/tune-trials.json``, named by
:mod:`workers.studies.tune_results`): written after each trial, and added back to an empty
Optuna storage before a search asks for more, so a search in a new database goes on from what
its sampler learned and plays only the trials still missing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from analysis.studies.definition import Study, StudyError, TopKey, header_line

FORMAT = "playtester-tune-trials"


def save_trials(stored: Any, search: str, path: Path) -> None:
    """Write ``stored``'s finished trials (an Optuna study) to ``path``, whole or not at all."""
    import optuna

    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    rows = [
        {
            "number": t.number,
            "state": t.state.name,
            "value": t.value,
            "params": t.params,
            "distributions": {
                name: optuna.distributions.distribution_to_json(d)
                for name, d in t.distributions.items()
            },
            "user_attrs": t.user_attrs,
        }
        for t in stored.trials
        if t.state in finished
    ]
    document = {"format": FORMAT, "version": 1, "search": search, "trials": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.new")
    staged.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(staged, path)


def restore_trials(stored: Any, search: str, path: Path, study: Study) -> int:
    """Add the trials saved at ``path`` to ``stored`` when it holds none; how many were added.
    ``StudyError`` when the file holds another search's trials (another base batch, space or
    screening level): mixing them would mislead the sampler."""
    import optuna

    if not path.is_file() or stored.trials:
        return 0
    line = header_line(study.text, TopKey.TUNE, 0) or 1
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        same = document.get("format") == FORMAT and document.get("search") == search
        rows = document["trials"] if same else []
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise StudyError(study.path, line, "tune", f"{path} cannot be read: {exc}") from None
    if not same:
        raise StudyError(
            study.path,
            line,
            "tune",
            f"{path} holds the trials of another search; move it away to search anew",
        )
    for row in rows:
        stored.add_trial(
            optuna.trial.create_trial(
                state=optuna.trial.TrialState[row["state"]],
                value=row["value"],
                params=row["params"],
                distributions={
                    name: optuna.distributions.json_to_distribution(text)
                    for name, text in row["distributions"].items()
                },
                user_attrs=row["user_attrs"],
            )
        )
    return len(rows)
