"""rummyzoo's command line: one module per command (``rummyzoo --help``) and the terminal
front ends they share (the text game, the replay viewer, card drawing)."""
