"""The services a command calls: flags in, a result out, nothing printed.

doctor.py      the diagnosis: evidence -> checks -> ranking -> Report (every command goes through it)
hostcheck.py   `check host`, `check bundle`, `collect`: evidence from machines, one report each
inspection.py  `inspect-model`: a drafter (and target, and engine row) read and checked
gate.py        `gate`: measured acceptance against thresholds -> pass / fail / no data
"""
