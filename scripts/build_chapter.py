"""Execute one chapter and build it strictly on its own: `make chapter CH=laplace`.

Writes the page to _build/ch-<name>/ (the full book stays in _build/html) and prints how
long the build took (the chapter and the pages it needs are executed), so authors can keep
each chapter under 15 seconds.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    result = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "-W", "-n",
         "--keep-going", "--all", "--toc", str(toc), "--path-output", str(out)],
        cwd=ROOT, check=False)
    print(f"{name}: build (with execution) took {time.perf_counter() - start:.1f} s; "
          f"page: {out / '_build' / 'html' / 'book' / (name + '.html')}")
    return result.returncode


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: build_chapter.py <chapter name>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
