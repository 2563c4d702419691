"""Engine source analysis: what an installed vLLM or SGLang does with a DFlash drafter, read from its files.

Parses the engine's files with `ast` in the doctor's own process; nothing from the engine is
imported or run, on the host or here. See tree.py for how a collector feeds it, analysis.py for
the answers, outcome.py for the verdict on one deployment.
"""

from .analysis import analyse, detect_engine, first_files, follow_up, static_files, wanted_files
from .answers import CERTAIN, LIKELY, UNDECIDED, Answer, Cite, VersionReading
from .tree import DirectoryTree, FetchedTree, SourceTree

__all__ = [
    "CERTAIN",
    "LIKELY",
    "UNDECIDED",
    "Answer",
    "Cite",
    "DirectoryTree",
    "FetchedTree",
    "SourceTree",
    "VersionReading",
    "analyse",
    "detect_engine",
    "first_files",
    "follow_up",
    "static_files",
    "wanted_files",
]
