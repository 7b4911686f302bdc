"""Execute one chapter and build it strictly on its own: `make chapter CH=laplace`.

Writes the page to _build/ch-<name>/ (the full book stays in _build/html) and prints how
long the build took (the chapter and the pages it needs are executed), so authors can keep
each chapter under 15 seconds.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_WARNING = re.compile(r"^(?P<where>\S+?):(?:\d+:)? WARNING: (?P<what>.*?)(?: \[[\w.-]+\])?$")
_ELSEWHERE = re.compile(r"^(?:(?:undefined label|unknown document): '(?P<target>[^']+)'"
                        r"|prf:ref reference target not found: (?P<proof>\S+)"
                        r"|label '(?P<label>[^']+)' not found\.)$")


def _defined_elsewhere(name: str) -> set[str]:
    """The labels and documents the other pages of the book define (references to them
    cannot resolve in a build of one chapter, and are not errors of the chapter)."""
    found = set()
    for path in (ROOT / "book").glob("*.md"):
        if path.stem != name:
            text = path.read_text(encoding="utf-8")
            found |= set(re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M))
            found |= set(re.findall(r"^:label:\s*([\w-]+)\s*$", text, re.M))
            found.add(path.stem)
    return found


def _real_warnings(output: str, name: str) -> list[str]:
    """Sphinx's warnings in ``output`` except references to labels or pages of the book
    outside this build."""
    elsewhere = _defined_elsewhere(name)
    real = []
    for line in re.sub(r"\x1b\[[0-9;]*m", "", output).splitlines():
        warning = _WARNING.match(line.strip())
        if warning is None:
            continue
        target = _ELSEWHERE.match(warning["what"])
        name = target and (target["target"] or target["proof"] or target["label"])
        if name is None or name.rsplit("/", 1)[-1] not in elsewhere:
            real.append(line.strip())
    return real


def main(name: str) -> int:
    source = ROOT / "book" / f"{name}.md"
    if not source.is_file():
        chapters = sorted(p.stem for p in (ROOT / "book").glob("*.md"))
        print(f"no chapter {source}; chapters: {', '.join(chapters)}", file=sys.stderr)
        return 2
    out = ROOT / "_build" / f"ch-{name}"
    out.mkdir(parents=True, exist_ok=True)
    toc = out / "_toc.yml"
    # The intro and "What the promise means" (definitions every chapter refers to) and the
    # bibliography (citations) come along, so that references to them resolve.
    # The intro is the root; dict.fromkeys drops repeats and keeps the order.
    pages = [page for page in dict.fromkeys(["promise", name, "bibliography"])
             if page != "intro"]
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                   + "".join(f"  - file: book/{page}\n" for page in pages))
    start = time.perf_counter()
    # Strict but for references into the pages left out: Sphinx's own -W would fail on
    # those, so the warnings are read from its output instead.
    result = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "-n",
         "--keep-going", "--all", "--toc", str(toc), "--path-output", str(out)],
        cwd=ROOT, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(result.stdout, end="")
    real = _real_warnings(result.stdout, name)
    print(f"{name}: build (with execution) took {time.perf_counter() - start:.1f} s; "
          f"page: {out / '_build' / 'html' / 'book' / (name + '.html')}")
    if real:
        print(f"{len(real)} warning(s) (references to pages outside this build not counted):",
              *real, sep="\n  ", file=sys.stderr)
        return 1
    return result.returncode


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: build_chapter.py <chapter name>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
