"""What ``tune``'s permute space may search of Les Alvéoles' layout, on boards of any size: the
placements keep the base layout's values and the symmetry asked, and are valid layouts."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engines.alveoles.layouts import LAYOUT_SPACE, normalise_layout
from engines.alveoles.rules import LAYOUT_OPTION


def test_the_layout_option_declares_its_space() -> None:
    assert LAYOUT_OPTION.space is LAYOUT_SPACE
    assert LAYOUT_SPACE.symmetries == ("half_turn", "none")


@pytest.mark.parametrize(
    ("rows", "symmetry", "keys"),
    [
        # 2 × 3: six squares, three pairs under a half-turn.
        ([[9, 1, 4], [4, 1, 9]], "half_turn", 3),
        ([[9, 1, 4], [4, 1, 9]], "none", 6),
        # 3 × 3: the centre is its own image and keeps the one value seen an odd number of times.
        ([[2, 1, 3], [5, 7, 5], [3, 1, 2]], "half_turn", 4),
        # 3 × 5, fifteen squares: seven pairs and the centre.
        ([[1, 2, 3, 4, 5], [6, 7, 8, 6, 5], [4, 3, 2, 1, 7]], "half_turn", 7),
    ],
)
@pytest.mark.parametrize("seed", range(5))
def test_a_placement_on_any_board_keeps_its_values_shape_and_symmetry(
    rows: list[list[int]], symmetry: str, keys: int, seed: int
) -> None:
    base = normalise_layout(rows)
    assert LAYOUT_SPACE.cells(base, symmetry) == keys
    rng = random.Random(seed)
    drawn = [rng.random() for _ in range(keys)]
    placed = LAYOUT_SPACE.decode(base, drawn, symmetry)
    assert [len(row) for row in placed] == [len(row) for row in rows]
    flat = [v for row in placed for v in row]
    assert Counter(flat) == Counter(v for row in rows for v in row)
    if symmetry == "half_turn":
        height, width = len(rows), len(rows[0])
        for r in range(height):
            for c in range(width):
                assert placed[r][c] == placed[height - 1 - r][width - 1 - c]
    counts = Counter(flat)
    if symmetry == "half_turn" and len(flat) % 2:
        # The centre holds the value seen an odd number of times; the pairs share the rest.
        assert counts[flat[len(flat) // 2]] % 2 == 1
        counts[flat[len(flat) // 2]] -= 1
    # The cell with the smallest key holds the largest value a key places.
    assert flat[min(range(keys), key=drawn.__getitem__)] == max(v for v, n in counts.items() if n)
    assert normalise_layout(placed) is not None  # the option takes it back


def test_values_that_cannot_keep_a_half_turn_are_refused() -> None:
    # 3 × 3 with two values seen an odd number of times: no centre can take both.
    base = normalise_layout([[2, 1, 3], [5, 7, 4], [3, 1, 2]])
    with pytest.raises(ValueError, match="even number"):
        LAYOUT_SPACE.decode(base, [0.5] * 4, "half_turn")
    with pytest.raises(ValueError, match="take 4 keys, not 3"):
        LAYOUT_SPACE.decode(
            normalise_layout([[2, 1, 3], [5, 7, 5], [3, 1, 2]]), [0.1] * 3, "half_turn"
        )
    with pytest.raises(ValueError, match="unknown symmetry"):
        LAYOUT_SPACE.cells(base, "mirror")
