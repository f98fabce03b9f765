"""Backup, restore and the move from SQLite to PostgreSQL: copies of a whole database.

``service.py`` holds the rules (what is checked, in which order, what is refused);
``repository.py`` the SQL, over the drivers' own connections; the commands are in
``anonbox.cli``. See docs/decisions.md, "Backup, restore and the move to PostgreSQL".
"""
