"""Strength per CPU second: each game's levels against each other and a fixed reference.

    .venv/bin/python -m bench.ladder plan --game alquerque   # a round of each pairing; the plan
    .venv/bin/python -m bench.ladder run --game alquerque --workers 1
    .venv/bin/python -m bench.ladder run --game alhambra --pairing expert-greedy --games 300
    .venv/bin/python -m bench.ladder table        # the built-in games and any other with a file
    .venv/bin/python -m bench.ladder table --markdown --plot docs/ladder.png

A ladder (``analysis/ladder/ladders.py``) names a game's levels, weakest first as expected,
its reference level, its player count and the game's options: a built-in game's is written
there, an installed game's is its module's ``LADDER`` (``engines.contract.LadderDeclaration``),
or, when it declares none, the generic ladder of the generic agents it is offered. ``--game``
takes every game that loads (an installed one only where its package is installed).

Its pairings are each level against the next and against the reference (and any further
pairings it names). A pairing ``A-B`` is a playtester batch of its own
(``workers.batches.plan_batch``: agents ``[A, B]``, or ``[A, B, B]`` for three players,
balanced seating, the game's default variation unless the ladder sets its own opening length,
``Ladder.opening_plies``, a seed derived from the pairing), and
match ``i`` is that batch's match ``i`` (``workers.play.seat_match``), so its seating, opening
or deal are the service's. A worker process loads each compiled search before the match's
clock starts and times every ``step`` of every seat with ``time.process_time``.

Results append, one JSON line per match, to ``studies/results/ladder/<game>.jsonl``; a rerun
skips the matches already there, and every table is computed from the files alone, so a
ladder can be run in pieces, on several machines, and its files committed.
"""
