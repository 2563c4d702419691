"""Ranking: cause knowledge as data files, and the scoring that reads them."""
