"""``make lab``: :func:`dpkit.course.lab.main`, with this checkout's dpkit.

The lab itself (what it serves, its settings, the student and instructor labs) is
documented in :mod:`dpkit.course.lab`; without ``make`` it is
``python -m dpkit.course lab``. Usage: ``python scripts/lab.py [--instructor] [FOLDER]
[more jupyter lab options in the --name=value form]``.
"""

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from dpkit.course.lab import main

    sys.exit(main(sys.argv[1:]))
