"""The compiled functions' cache key (``engines.kernel_cache``): computed from what each one
reaches, so an edit anywhere below a search recompiles it and nothing is listed by hand."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from numba.core.registry import CPUDispatcher
from repo_paths import REPO

from engines.compiled import search_ismcts, search_negamax, search_uct
from engines.kernel_cache import function_digest, reached

SEARCHES = {
    "uct": search_uct.root_moves,
    "ismcts": search_ismcts.root_moves,
    "negamax": search_negamax.search,
}


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_each_search_key_covers_every_game_kernel_it_dispatches_to(search: str) -> None:
    """Every search inlines the same dispatch, so each one's key covers every kernel, down to
    the helpers of helpers in other modules and the bit intrinsics (by their source)."""
    names = set(reached(SEARCHES[search]))
    for expected in (
        "engines.alveoles.kernel.apply",
        "engines.alquerque.kernel.legal_actions",
        "engines.abalone.kernel.apply",
        "engines.alhambra.kernel_rules.apply",  # re-exported by Alhambra's kernel
        "engines.kernel_rng.next_u64",  # below rand_below, below every kernel
        "engines.kernel_clock.now",  # below past, the clock check
        "engines.kernel_bits._popcount",  # an intrinsic, below Abalone's move generator
        "engines.kernel_bits._trailing_zeros",
    ):
        assert expected in names, (search, expected)
    # Alhambra's own rule helpers live in two more modules the kernel imports.
    assert any(name.startswith("engines.alhambra.kernel_rules.") for name in names)
    assert any(name.startswith("engines.alhambra.kernel_build.") for name in names)


def test_what_only_one_search_calls_is_in_its_key_alone() -> None:
    hidden = set(reached(search_ismcts.root_moves))
    assert "engines.alhambra.kernel.redraw" in hidden
    assert "engines.alhambra.kernel.redraw" not in reached(search_uct.root_moves)
    assert "engines.alhambra.kernel.greedy_rollout_action" in hidden
    assert "engines.alhambra.kernel.greedy_rollout_action" not in reached(search_uct.root_moves)
    assert "engines.abalone.kernel.key" in reached(search_negamax.search)
    assert "engines.abalone.kernel.key" not in hidden


def test_every_compiled_function_in_engines_has_the_computed_key() -> None:
    """A module that forgot ``track`` would cache on its own bytecode alone."""
    modules = [
        "engines.kernel_rng",
        "engines.kernel_clock",
        *(f"engines.{game}.kernel" for game in ("alveoles", "alquerque", "abalone", "alhambra")),
        "engines.alhambra.kernel_rules",
        "engines.alhambra.kernel_build",
        "engines.alhambra.kernel_money",
        *(f"engines.compiled.{name}" for name in ("dispatch", "dispatch_alphabeta")),
        *(f"engines.compiled.search_{name}" for name in ("parts", "uct", "ismcts", "negamax")),
    ]
    for name in modules:
        module = importlib.import_module(name)
        functions = [
            value
            for value in vars(module).values()
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name
        ]
        assert functions, name
        for function in functions:
            assert type(function._cache).__name__ == "_DigestCache", (name, function)
            assert len(function_digest(function)) == 64


_PROBE = """
import json, sys
import numpy as np
from engines.abalone import kernel
from engines.registry import load_game
state = kernel.encode(load_game("abalone").new_initial_state(0))
value = kernel.evaluate(state, 0)
stats = kernel.evaluate.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _probe(tree: pathlib.Path, cache: pathlib.Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, cwd=tree, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_an_edit_to_a_deep_helper_recompiles_what_calls_it(tmp_path: pathlib.Path) -> None:
    """In a copy of the package: Abalone's evaluation loads from numba's cache while nothing
    changed, and compiles again once the population-count intrinsic two calls below it, in
    another module, is edited (which numba's own key, the function's file, would miss)."""
    tree = tmp_path / "tree"
    shutil.copytree(
        REPO / "engines", tree / "engines", ignore=shutil.ignore_patterns("__pycache__")
    )
    cache = tmp_path / "cache"
    first = _probe(tree, cache)
    assert first["misses"] == 1 and first["hits"] == 0
    again = _probe(tree, cache)
    assert again == {**first, "hits": 1, "misses": 0}
    bits = tree / "engines" / "kernel_bits.py"
    source = bits.read_text()
    edited = source.replace(
        "        return builder.ctpop(args[0])",
        "        counted = builder.ctpop(args[0])\n        return counted",
    )
    assert edited != source
    bits.write_text(edited)
    after = _probe(tree, cache)
    assert after == {**first, "hits": 0, "misses": 1}
