"""Every stop rule the documentation writes, spaces after its commas or not, is read by the
one reader: ``study plan`` prices a precision stop at the figure and half-width the batch then
stops at, and the command line, the API and a study plan the same rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_paths import REPO
from typer.testing import CliRunner

from analysis.precision import precision_state
from analysis.stopping import PrecisionRule, SprtRule, of_batch, parse
from analysis.studies.definition import load_study
from api.cli import app
from storage import crud
from storage.db import get_engine, upgrade
from storage.settings import Settings
from workers.batches import plan_batch
from workers.request_text import parse_stop
from workers.studies.calibrate import target_of
from workers.studies.plan import plan_study

DOCUMENTS = ["README.md", "docs/*.md", "studies/*.toml", "api/cli/batch_options.py"]
WRITTEN = re.compile(r"\b((?:precision|sprt):[A-Za-z0-9_:.=,\[\]]*[A-Za-z0-9_\]])")
PLACEHOLDERS = {"FIGURE": "first_player_advantage", "H": "0.05", "N": "40", "A": "x", "B": "y"}
AGENTS = ("random", "easy")


def documented() -> list[str]:
    """The stop rules the documentation writes, each optional part taken and left out, its
    placeholders and labels made this batch's (``random`` and ``easy``)."""
    found: set[str] = set()
    for pattern in DOCUMENTS:
        for path in sorted(REPO.glob(pattern)):
            found.update(m.group(1) for m in WRITTEN.finditer(path.read_text()))
    forms = set()
    for text in found:
        for optional in (True, False):
            form = _ours(re.sub(r"\[(.*?)\]", r"\1" if optional else "", text))
            if form.startswith("precision:") and "half_width" not in form:
                form += ",half_width=0.05"  # what ``precision:score:LABEL,...`` leaves out
            forms.add(form)
    return sorted(forms)


def _ours(form: str) -> str:
    kind, _, rest = form.partition(":")
    parts = rest.split(",")
    if kind == "precision":
        figure = PLACEHOLDERS.get(parts[0], parts[0])
        if figure.startswith("score:"):
            figure = f"score:{AGENTS[1]}"
        parts[0] = figure
    else:
        names = iter(AGENTS)
        parts = [p if "=" in p else next(names) for p in parts]
    parts = [
        f"{k}={PLACEHOLDERS.get(v, v)}" if "=" in p else p
        for p in parts
        for k, _, v in [p.partition("=")]
    ]
    return f"{kind}:{','.join(parts)}"


FORMS = documented()


def test_the_documentation_shows_both_kinds_with_their_options() -> None:
    assert any(f.startswith("precision:score:") for f in FORMS)
    assert any(f.startswith("precision:first_player_advantage") for f in FORMS)
    assert any("min_units=" in f for f in FORMS) and any("alpha=" in f for f in FORMS)
    assert any(f.startswith("sprt:") for f in FORMS)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path_factory.mktemp('forms') / 'p.db'}"
    upgrade(url)
    return get_engine(url)


@pytest.mark.parametrize("spaced", [False, True], ids=["as written", "spaces after commas"])
@pytest.mark.parametrize("form", FORMS)
def test_study_plan_prices_what_the_batch_stops_at(
    form: str, spaced: bool, tmp_path: Path, engine
) -> None:  # type: ignore[no-untyped-def]
    written = form.replace(",", ", ") if spaced else form
    study_file = tmp_path / "forms.toml"
    study_file.write_text(
        'title = "Stop rules"\n\n[[batch]]\nname = "b"\ngame = "alquerque"\n'
        f'agents = "{",".join(AGENTS)}"\nmatches = 400\nseed = 3\nstop = "{written}"\n'
    )
    study = load_study(study_file)
    (planned,) = plan_study(study, Settings())
    # The batch as stored, and the rule the check after each chunk reads from it.
    stored = crud.create_batch(engine, plan=planned.plan)
    rule = of_batch(crud.get_batch(engine, stored.id))
    assert rule == parse(written) == parse_stop(form)
    # The command line and the API plan the same batch.
    assert plan_batch(settings=Settings(), **{**planned.asked.body(), "stop_rule": form}).stop_rule
    assert planned.plan.stop_rule == rule.to_json()
    target = target_of(study, planned)
    if isinstance(rule, SprtRule):
        assert not target.stops
        return
    assert isinstance(rule, PrecisionRule)
    assert (target.figure, target.half_width, target.stops) == (rule.figure, rule.half_width, True)
    # The batch stops once the interval is as narrow as calibration priced it, not before.
    h = target.half_width
    assert precision_state(0.0, -h, h, rule.min_units, rule)["result"] == "reached"
    assert precision_state(0.0, -h * 1.001, h * 1.001, rule.min_units, rule)["result"] is None


def test_the_cli_reads_a_spaced_rule_as_the_study_does(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    answer = CliRunner().invoke(
        app,
        ["run", "alquerque", "--agents", "random,easy", "-n", "4", "--seed", "1", "--db", db,
         "--workers", "1", "--stop", "precision:score:easy, half_width=0.2, min_units=2"],
    )  # fmt: skip
    assert answer.exit_code == 0, answer.output
    (batch,) = crud.list_batches(get_engine(db))
    assert of_batch(batch) == PrecisionRule("score:easy", 0.2, 2)
