"""Studies planned and run: each batch of a study file checked and keyed by its definition
(``plan``), run in this machine's database (``runner``) or on a server (``remote``), and the
search of ``playtester tune`` (``tuning``: the ``[tune]`` table; ``search``: Optuna)."""
