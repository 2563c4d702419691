"""The cause knowledge: every cause, the rules that move it, and what its fix is, as data (causes.toml),
and the loader that validates it (causes.py). A new cause is an entry in causes.toml."""
