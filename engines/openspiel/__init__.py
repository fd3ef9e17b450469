"""OpenSpiel both ways (needs the ``openspiel`` extra).

Importing this package registers our games with OpenSpiel as ``playtester_alveoles``,
``playtester_abalone``, ``playtester_alquerque`` and ``playtester_alhambra``
(:mod:`engines.openspiel.ours`), so every OpenSpiel algorithm runs on them::

    import pyspiel
    import engines.openspiel

    game = pyspiel.load_game("playtester_alquerque", {"no_capture_limit": 30})

An installed game is registered on first use (``register``, or ``spiel_game_of`` with one of
its games) through the generic adapter, which serves a game with neither chance nor hidden
information (:func:`engines.openspiel.adapters.adapter_of`).

The other way, any OpenSpiel game is a playtester game named ``openspiel:<name>``
(:mod:`engines.openspiel.spiel`), and OpenSpiel's ``MCTSBot`` is the agent
``openspiel_mcts`` (:mod:`engines.openspiel.bots`).
"""

from engines.openspiel.ours import register, register_all, spiel_game_of, spiel_short_name

register_all()

__all__ = ["register", "register_all", "spiel_game_of", "spiel_short_name"]
