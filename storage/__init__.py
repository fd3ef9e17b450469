"""Tables, database engine and settings: the one place the rest of playtester gets them from."""
