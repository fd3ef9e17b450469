"""The sentences a search's page ends on: which confirmed variant is closer to an even game,
read from the two first-player advantages and their difference, and how much closer to even
than the base any replayed variant can be."""

from __future__ import annotations

import pytest

from analysis.studies.search_page import closer_at_most, verdict


def figure(estimate: float, low: float, high: float) -> dict[str, float]:
    return {"estimate": estimate, "ci_low": low, "ci_high": high}


def test_the_fair_layout_searchs_own_figures_read_as_the_base_being_closer() -> None:
    # The confirmations of the fair-layout search as they stood: best +3.6 [+2.6, +4.6],
    # base +1.3 [-0.8, +3.4], best minus base +2.3 [-0.1, +4.6].
    answer = verdict(
        figure(0.036, 0.026, 0.046), figure(0.013, -0.008, 0.034), figure(0.023, -0.001, 0.046)
    )
    assert answer.as_dict() == {"closer": "base", "even": ["base"], "differ": False}
    assert answer.sentence("layout") == (
        "Closer to an even game: **the base layout** (+1.3 %, against the best's +3.6 %). "
        "The base's interval holds zero; the best's does not. "
        "The two do not differ at 95 % (the difference's interval holds zero)."
    )


def test_distance_from_zero_decides_not_the_sign() -> None:
    # -2 points is closer to even than +3, though it is the smaller signed figure too; and
    # +2 is closer than -3, though it is the larger one.
    assert (
        verdict(
            figure(-0.02, -0.03, -0.01), figure(0.03, 0.02, 0.04), figure(-0.05, -0.06, -0.04)
        ).closer
        == "best"
    )
    assert (
        verdict(
            figure(0.02, 0.01, 0.03), figure(-0.03, -0.04, -0.02), figure(0.05, 0.04, 0.06)
        ).closer
        == "best"
    )
    assert (
        verdict(
            figure(0.03, 0.02, 0.04), figure(-0.02, -0.03, -0.01), figure(0.05, 0.04, 0.06)
        ).closer
        == "base"
    )


def test_a_tie_goes_to_the_base_which_changes_nothing() -> None:
    answer = verdict(
        figure(-0.01, -0.02, 0.0), figure(0.01, 0.0, 0.02), figure(-0.02, -0.03, -0.01)
    )
    assert answer.closer == "base"
    # Both intervals reach zero at their edge: an edge counts as holding it.
    assert answer.even == ("best", "base")
    assert answer.differ
    assert "Both intervals hold zero. The two differ at 95 %." in answer.sentence("layout")


@pytest.mark.parametrize(
    ("difference", "differ"),
    [
        (figure(0.02, 0.001, 0.04), True),
        (figure(0.02, 0.0, 0.04), False),
        (figure(-0.02, -0.04, -0.001), True),
        ({"difference": 0.02}, False),  # no interval: nothing is claimed
    ],
)
def test_the_two_differ_only_when_the_differences_interval_leaves_out_zero(
    difference: dict[str, float], differ: bool
) -> None:
    answer = verdict(figure(0.05, 0.04, 0.06), figure(0.03, 0.02, 0.04), difference)
    assert answer.differ is differ
    assert answer.even == ()
    assert "Neither interval holds zero." in answer.sentence("layout")


@pytest.mark.parametrize(
    ("base", "others", "most"),
    [
        # The base at most 1.3 from zero; the nearer replayed variant at least 0.8: 0.5 closer.
        (figure(0.003, -0.007, 0.013), [figure(0.03, 0.008, 0.053), figure(0.046, 0.024, 0.068)],
         0.005),
        # A variant whose interval holds zero may be at zero: as close as the base can be far.
        (figure(0.003, -0.007, 0.013), [figure(0.01, -0.002, 0.02)], 0.013),
        # Distance, not sign: [-5, -2] is at least 2 from zero; the base's far end is -3.
        (figure(-0.01, -0.03, 0.01), [figure(-0.035, -0.05, -0.02)], 0.01),
        # Every variant farther than the base can be: negative, by at least 1.5 points.
        (figure(0.0, -0.005, 0.005), [figure(0.025, 0.02, 0.03), figure(-0.03, -0.04, -0.025)],
         -0.015),
    ],
)  # fmt: skip
def test_closer_at_most_reads_the_intervals_far_end_against_each_variants_near_end(
    base: dict[str, float], others: list[dict[str, float]], most: float
) -> None:
    assert closer_at_most(base, others) == pytest.approx(most)


def test_closer_at_most_needs_a_variant_to_compare() -> None:
    with pytest.raises(ValueError, match=r"^others: "):
        closer_at_most(figure(0.0, -0.01, 0.01), [])
