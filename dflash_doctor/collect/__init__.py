"""Evidence collection: what to gather, from files the user names or from a host."""
