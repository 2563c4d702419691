"""dflash-doctor: ranked root causes for low speculative-decoding acceptance.

Data flows one way: collect evidence -> run checks -> rank causes -> render.
"""

import os as _os

__version__ = "0.1.0"

# In a source checkout the built-in checks live in the top-level ``checks/`` folder; an installed
# distribution maps that folder to ``dflash_doctor/checks`` (see pyproject.toml). Extending the
# package path lets ``import dflash_doctor.checks`` work the same way from a checkout.
_here = _os.path.dirname(_os.path.abspath(__file__))
_root = _os.path.dirname(_here)
if (
    not _os.path.isdir(_os.path.join(_here, "checks"))
    and _os.path.isfile(_os.path.join(_root, "checks", "__init__.py"))
    and _os.path.isfile(_os.path.join(_root, "pyproject.toml"))
):
    __path__.append(_root)  # noqa: F821
