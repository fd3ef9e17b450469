"""The one stop-rule reader: its text, its JSON and its value read back to each other, the
stored objects of every version load, and every refusal names its field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis.stopping import (
    MIN_UNITS,
    PrecisionRule,
    SprtRule,
    StopRule,
    from_json,
    of_batch,
    parse,
)
from engines.core import OptionError

LABEL = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20
).filter(lambda s: s.strip() == s)
"""Any agent label, commas, ``=`` and colons included (``mcts(iterations=400)``)."""
ELO = st.floats(-2000, 2000, allow_nan=False)
RATE = st.floats(0, 0.5, exclude_min=True, exclude_max=True)


@st.composite
def sprt_rules(draw: st.DrawFn) -> SprtRule:
    a, b = draw(st.lists(LABEL, min_size=2, max_size=2, unique=True))
    elo0, elo1 = sorted(draw(st.lists(ELO, min_size=2, max_size=2, unique=True)))
    return SprtRule((a, b), elo0, elo1, draw(RATE), draw(RATE))


@st.composite
def precision_rules(draw: st.DrawFn) -> PrecisionRule:
    figure = draw(st.one_of(st.just("first_player_advantage"), LABEL.map("score:{}".format)))
    half = draw(st.floats(0, 0.5, exclude_min=True, exclude_max=True))
    return PrecisionRule(figure, half, draw(st.integers(2, 1_000_000)))


RULES = st.one_of(sprt_rules(), precision_rules())


@given(RULES)
def test_text_and_json_read_back_to_the_rule(rule: StopRule) -> None:
    assert parse(rule.text()) == rule
    assert from_json(rule.to_json()) == rule
    assert from_json(json.loads(json.dumps(rule.to_json()))) == rule
    assert parse(json.dumps(rule.to_json())) == rule
    assert from_json(rule.request_json()) == rule


@given(RULES, st.sampled_from([", ", " ,", " , ", ",  "]))
def test_spaces_around_commas_read_the_same(rule: StopRule, comma: str) -> None:
    text = rule.text()
    if text.startswith("{"):  # a label the short form cannot hold
        return
    assert parse(text.replace(",", comma)) == rule


@pytest.mark.parametrize(
    ("stored", "rule"),
    [
        # As every version stored them: SPRT without a type, or without its error rates.
        ({"agents": ["a", "b"], "elo0": 0, "elo1": 5}, SprtRule(("a", "b"))),
        (
            {"type": "sprt", "agents": ["a", "b"], "elo0": 0.0, "elo1": 50.0},
            SprtRule(("a", "b"), elo1=50.0),
        ),
        (
            {
                "type": "sprt",
                "agents": ["x", "y"],
                "elo0": -5.0,
                "elo1": 5.0,
                "alpha": 0.1,
                "beta": 0.02,
            },
            SprtRule(("x", "y"), -5.0, 5.0, 0.1, 0.02),
        ),
        (
            {
                "type": "precision",
                "figure": "first_player_advantage",
                "half_width": 0.01,
                "min_units": 30,
            },
            PrecisionRule("first_player_advantage", 0.01),
        ),
        (
            {"type": "precision", "figure": "score:greedy", "half_width": 0.03, "min_units": 50},
            PrecisionRule("score:greedy", 0.03, 50),
        ),
    ],
)
def test_stored_rules_of_every_version_load(stored: dict[str, Any], rule: StopRule) -> None:
    assert from_json(stored) == rule

    class Row:
        stop_rule = stored

    assert of_batch(Row()) == rule
    # Stored again as it always was: the canonical object, defaults filled in.
    assert from_json(rule.to_json()).to_json() == rule.to_json()


def test_a_rule_remembers_what_was_written() -> None:
    # The digests of requests (fingerprints, a study batch's derived seed) were taken over
    # what the old readers returned: these objects, numbers as floats from the short forms.
    assert parse("precision:first_player_advantage, half_width=0.02").request_json() == {
        "type": "precision",
        "figure": "first_player_advantage",
        "half_width": 0.02,
    }
    assert parse("sprt:a, b, elo0=0, elo1=20").request_json() == {
        "type": "sprt",
        "elo0": 0.0,
        "elo1": 20.0,
        "agents": ["a", "b"],
    }
    assert parse('{"agents": ["a", "b"]}').request_json() == {"agents": ["a", "b"]}
    assert PrecisionRule("score:a", 0.1).min_units == MIN_UNITS


@pytest.mark.parametrize(
    ("written", "field"),
    [
        ("precision:first_player_advantage, half_width=0.7", "stop_rule.half_width"),
        ("precision:first_player_advantage,half_width=x", "stop_rule.half_width"),
        ("precision:elo,half_width=0.1", "stop_rule.figure"),
        ("precision:score:,half_width=0.1", "stop_rule.figure"),
        ("precision:first_player_advantage,half_width=0.1,min_units=1", "stop_rule.min_units"),
        ("precision:first_player_advantage,half_width=0.1,min_units=inf", "stop_rule.min_units"),
        ("precision:first_player_advantage,half_width=0.1,depth=3", "stop_rule.depth"),
        ("precision:first_player_advantage,0.1", "stop_rule"),
        ("sprt:a,b,elo0=5,elo1=0", "stop_rule.elo1"),
        ("sprt:a,b,elo1=nan", "stop_rule.elo1"),
        ("sprt:a,b,beta=0.5", "stop_rule.beta"),
        ("sprt:a", "stop_rule.agents"),
        ("sprt:a,a", "stop_rule.agents"),
        ('{"type": "wald"}', "stop_rule.type"),
        ('{"agents": ["a", "b"], "elo1": 1e999}', "stop_rule.elo1"),
        ("[1]", "stop_rule"),
        ("wait:a,b", "stop_rule"),
    ],
)
def test_a_refusal_names_its_field(written: str, field: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse(written)
    assert caught.value.field == field


def test_validation_checks_what_the_rule_names_in_the_batch() -> None:
    assert parse("sprt:a,b").validate(["a", "b", "c"]) == SprtRule(("a", "b"))
    with pytest.raises(OptionError) as caught:
        parse("sprt:a,z").validate(["a", "b"])
    assert caught.value.field == "stop_rule.agents"
    with pytest.raises(OptionError) as caught:
        parse("precision:score:z,half_width=0.1").validate(["a", "b"])
    assert caught.value.field == "stop_rule.figure"
    assert parse("precision:score:b,half_width=0.1").validate(["a", "b"]).score_of == "b"
