"""Game-specific report sections, one module per game (keyed by the game's short name)."""
