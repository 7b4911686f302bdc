"""``make chapter CH=…`` (scripts/build_chapter.py) builds one chapter strictly: a warning
fails it, except a reference to a label or page of the book that the one-chapter build
leaves out (a chapter that cites another chapter's exercise would otherwise never pass)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("build_chapter", ROOT / "scripts" /
                                                  "build_chapter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_references_into_pages_left_out_are_not_warnings() -> None:
    script = _script()
    out = ("\x1b[91m/r/book/composition.md:246: WARNING: undefined label: "
           "'ex-gaussian-loss'\x1b[39;49;00m\n"
           "/r/book/composition.md:9: WARNING: unknown document: 'gaussian' [ref.doc]\n"
           "/r/book/composition.rst: WARNING: label 'thm-laplace-grid' not found.\n"
           "/r/book/composition.md:221: WARNING: prf:ref reference target not found: "
           "thm-laplace-grid\n")
    assert script._real_warnings(out, "composition") == []


def test_other_warnings_fail_the_build() -> None:
    script = _script()
    out = ("/r/book/composition.md:246: WARNING: undefined label: 'no-such-label'\n"
           "/r/book/composition.md:3: WARNING: image file not readable: x.png\n"
           "/r/book/composition.md:5: WARNING: undefined label: 'composition-bob'\n"
           "reading sources... [100%] book/composition\n")
    # a label of the chapter itself that does not resolve is the chapter's own error
    assert len(script._real_warnings(out, "composition")) == 3
