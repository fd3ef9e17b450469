"""Option validation shared by the CLI and the API: finite, bounded, canonical values."""

from __future__ import annotations

import math

import pytest

from engines.core import Option, OptionError, validate_options
from engines.registry import _agent_types, build_game, game_class, game_names, options_record


def every_option() -> list[tuple[str, Option]]:
    found = [(name, o) for name in game_names() for o in game_class(name).game_type.options]
    found += [(a.name, o) for a in _agent_types().values() for o in a.params]
    return found


@pytest.mark.parametrize(("owner", "option"), every_option(), ids=lambda x: getattr(x, "name", x))
def test_every_numeric_option_has_finite_bounds(owner: str, option: Option) -> None:
    if option.kind in (int, float):
        assert option.minimum is not None and math.isfinite(option.minimum), owner
        assert option.maximum is not None and math.isfinite(option.maximum), owner
        assert option.minimum <= option.default <= option.maximum, owner


@pytest.mark.parametrize(
    "value", ["nan", "NaN", "inf", "-inf", " Infinity ", float("nan"), float("inf"), 10**400]
)
def test_float_options_refuse_non_finite_values(value: object) -> None:
    weight = Option("w", float, 0.5, "a weight", minimum=0.0, maximum=1.0)
    with pytest.raises(OptionError) as caught:
        weight.validate(value, field="agents[0].w")
    assert caught.value.field == "agents[0].w"
    assert len(str(caught.value)) < 200


def test_text_choices_are_stored_as_declared() -> None:
    mode = Option("mode", str, "game", "playouts", choices=("game", "random"))
    assert mode.validate("  RANDOM ", field="mode") == "random"
    assert mode.validate("Game", field="mode") == "game"
    with pytest.raises(OptionError, match="one of"):
        mode.validate("rand\x00om", field="mode")


def test_unknown_option_names_name_the_field_even_when_they_are_arguments() -> None:
    for key in ("players", "name", "cls"):
        with pytest.raises(OptionError) as caught:
            build_game("alquerque", 2, {key: 3})
        assert caught.value.field == f"options.{key}"
    with pytest.raises(OptionError) as caught:
        validate_options((), {"x": 1}, owner="nothing", prefix="options.")
    assert caught.value.field == "options.x"


def test_stored_options_are_canonical() -> None:
    classic = build_game("alveoles", 3, {"layout": " CLASSIC ", "square_bonus": "DISJOINT"})
    assert options_record(classic) == {"layout": "classic", "square_bonus": "disjoint"}
    rows = [[r * 8 + c + 1 for c in range(8)] for r in range(8)]
    custom = build_game("alveoles", 2, {"layout": [float(v) for row in rows for v in row]})
    assert options_record(custom) == {"layout": rows, "square_bonus": "overlapping"}
    # What is stored builds the same game again.
    again = build_game("alveoles", 2, options_record(custom))
    assert again.options == custom.options


@pytest.mark.parametrize("digits", ["\u0661\u0660", "\uff11\uff10", "\u0967\u0966"])
def test_numbers_in_text_are_ascii_digits_only(digits: str) -> None:
    # Python's int() and float() read "\u0661\u0660" as 10; a person typing it meant no number
    # the batch would then store as one.
    with pytest.raises(OptionError) as caught:
        build_game("alquerque", None, {"no_capture_limit": digits})
    assert caught.value.field == "options.no_capture_limit"
    assert build_game("alquerque", None, {"no_capture_limit": "10"}).no_capture_limit == 10


def test_float_parameters_in_text_are_ascii_digits_only() -> None:
    from engines.registry import load_game, normalise_agent_spec

    game = load_game("alquerque")
    spec = {"name": "mcts", "exploration": "\u0661.\u0665"}  # "1.5" in Arabic-Indic digits
    with pytest.raises(OptionError) as caught:
        normalise_agent_spec(game, spec, field="agents[0]")
    assert caught.value.field == "agents[0].exploration"
    ascii_spec = normalise_agent_spec(game, {**spec, "exploration": "1.5"}, field="agents[0]")
    assert ascii_spec["exploration"] == 1.5
