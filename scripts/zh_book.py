"""Build the Simplified Chinese edition (中文版) into _build/html/zh/: `make book` runs it after
the English build, `make test` with ``-W -n --keep-going``.

The zh edition is a second Jupyter Book project generated in _build/zh_src/ from the English
one, so that the English build, its configuration and its tests stay as they are:

- ``_config.yml`` is the English one with Sphinx's ``language`` set to ``zh_CN`` (the theme's
  and Sphinx's own interface strings in Chinese), the title, author and footer in Chinese.
- ``_toc.yml`` is the English one, page for page, with the Chinese captions and the glossary
  (book/zh/glossary.md) added at the end of the back matter: every English page has a zh page
  at the same place, so chapter, theorem, exercise and figure numbers are the same in both.
- ``book/<name>.md`` is book/zh/<name>.md where a translation exists; otherwise the English
  page with :data:`NOTICE` below its title, so that the numbering never shifts while chapters
  are being translated. ``_static``, ``_ext``, ``_templates`` and ``references.bib`` are links
  to the English ones (one copy of the theme fixes, scripts and bibliography).

The kernels of the zh build run with ``DPKIT_LANG=zh`` (:mod:`dpkit.i18n`): the chapters' code
cells are those of the English edition, and the figures' and widgets' labels switch language
inside dpkit. The HTML is copied to _build/html/zh/, beside the English pages, so that the
language switch (book/_static/book.js) reaches the other edition by a relative link.

Usage: ``python scripts/zh_book.py [jupyter-book build options]``; ``--prepare-only`` writes
_build/zh_src/ without building; ``--pdf OUTPUT.pdf`` prints the zh edition as ``make pdf``
prints the English one (scripts/pdf.py: one HTML page, printed by chromium, whose fonts for
Chinese are Debian's fonts-noto-cjk; the words the printing adds, such as the contents'
heading and the page numbers, come from :mod:`dpkit.i18n` in Chinese).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
#: The generated source tree of the zh edition.
SOURCE = ROOT / "_build" / "zh_src"
#: Where the zh pages are served, beside the English pages in _build/html.
OUTPUT = ROOT / "_build" / "html" / "zh"
#: What a page not yet translated says below its title.
NOTICE = "本章尚未翻译，以下为英文原文。"
#: The zh edition's title and author (the title page of its PDF, the pages' footer), and its
#: captions for the English toc's.
TITLE = "交互式差分隐私"
AUTHOR = "《交互式差分隐私》的作者"
#: The button of a cell whose code is hidden: show it, hide it.
CODE_PROMPTS = ("显示代码单元", "隐藏代码单元")
CAPTIONS = {"Chapters": "章节", "Back matter": "附录"}
#: The page added at the end of the zh back matter.
GLOSSARY = "book/glossary"
#: The zh footer (the English one's licences and error report, in Chinese).
FOOTER = (
    '<p>文字与插图：<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>。'
    "代码（dpkit 与各章的代码单元）：MIT。UCI Adult 数据（Becker 与 Kohavi，1996）：CC BY 4.0。"
    "见仓库中的 LICENSE 与 LICENSE-CC-BY-4.0。</p>"
    "<p>发现错误？请在仓库的问题跟踪器上报告：页面顶部仓库菜单（GitHub 图标）中的"
    "“Open issue”会就当前页面新建一个问题。</p>")
#: What the zh tree links to in the English one.
SHARED = ("_static", "_ext", "_templates", "references.bib")


def toc_files(toc: dict[str, Any]) -> list[str]:
    """The pages of a Jupyter Book ``_toc.yml`` (``book/<name>``), root first, in order."""
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part.get("chapters", [])]
    return files


def zh_toc(toc: dict[str, Any]) -> dict[str, Any]:
    """The zh edition's toc: ``toc`` with Chinese captions and the glossary appended to its
    last part (the back matter)."""
    zh = copy.deepcopy(toc)
    for part in zh.get("parts", []):
        part["caption"] = CAPTIONS.get(part.get("caption", ""), part.get("caption", ""))
    zh["parts"][-1]["chapters"].append({"file": GLOSSARY})
    return zh


def zh_config(config: dict[str, Any]) -> dict[str, Any]:
    """The zh edition's ``_config.yml``: ``config`` in Chinese (Sphinx ``language`` zh_CN,
    title, footer)."""
    zh = copy.deepcopy(config)
    zh["title"] = TITLE
    zh["author"] = AUTHOR
    zh["html"]["extra_footer"] = FOOTER
    zh["sphinx"]["config"]["language"] = "zh_CN"
    # myst-nb's button on a cell whose code is hidden ("Show code cell source"), in the HTML
    # pages and the PDF; its {type} (source, outputs) is English, so the words leave it out.
    zh["sphinx"]["config"].update(nb_code_prompt_show=CODE_PROMPTS[0],
                                  nb_code_prompt_hide=CODE_PROMPTS[1])
    # For the language switch (book/_ext/book_html.py): this is the zh edition, and the
    # glossary has no English page.
    zh["sphinx"]["config"]["html_context"].update(edition="zh", edition_only=[GLOSSARY])
    zh["parse"]["myst_substitutions"]["zh_glossary"] = "{doc}`术语表（English ↔ 中文） <glossary>`"
    return zh


def with_notice(text: str) -> str:
    """An English page marked as untranslated: :data:`NOTICE` in a note below its first
    ``#`` heading, or at the top of its body (after its front matter) if it has none."""
    note = f"\n:::{{note}}\n{NOTICE}\n:::\n"
    title = re.search(r"^# .*\n", text, flags=re.MULTILINE)
    if title is not None:
        end = title.end()
    elif text.startswith("---\n"):
        end = text.index("\n---\n", 3) + len("\n---\n")
    else:
        end = 0
    return text[:end] + note + text[end:]


def prepare(root: Path = ROOT, source: Path = SOURCE) -> dict[str, str]:
    """Write the zh edition's source tree into ``source`` from the book in ``root``.

    Returns
    -------
    dict
        ``{page: "translated" | "English"}`` for every page of the zh toc.

    Raises
    ------
    FileNotFoundError
        If a page of the English toc has no file, or book/zh/glossary.md is missing.
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    config = yaml.safe_load((root / "_config.yml").read_text())
    if source.exists():
        shutil.rmtree(source)
    (source / "book").mkdir(parents=True)
    for name in SHARED:
        (source / "book" / name).symlink_to(root / "book" / name)
    status = {}
    for page in toc_files(zh_toc(toc)):
        name = Path(page).name
        translated = root / "book" / "zh" / f"{name}.md"
        if translated.is_file():
            text, status[page] = translated.read_text(), "translated"
        else:
            text, status[page] = with_notice((root / f"{page}.md").read_text()), "English"
        (source / f"{page}.md").write_text(text)
    (source / "_toc.yml").write_text(yaml.safe_dump(zh_toc(toc), allow_unicode=True,
                                                    sort_keys=False))
    (source / "_config.yml").write_text(yaml.safe_dump(zh_config(config), allow_unicode=True,
                                                       sort_keys=False))
    return status


def build(options: list[str]) -> int:
    """Prepare, build (kernels with ``DPKIT_LANG=zh``) and copy the HTML to :data:`OUTPUT`;
    return jupyter-book's exit status."""
    status = prepare()
    print("zh edition: " + ", ".join(f"{Path(p).name} ({s})" for p, s in status.items()))
    environment = dict(os.environ, DPKIT_LANG="zh")
    start = time.perf_counter()
    result = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(SOURCE), *options],
        cwd=ROOT, env=environment, check=False)
    print(f"zh edition: build (with execution) took {time.perf_counter() - start:.1f} s")
    built = SOURCE / "_build" / "html"
    if built.is_dir():
        if OUTPUT.exists():
            shutil.rmtree(OUTPUT)
        shutil.copytree(built, OUTPUT)
        print(f"The zh edition: {OUTPUT / 'index.html'}")
    return result.returncode


def print_pdf(pdf: Path) -> Path:
    """Prepare the zh edition and print it into ``pdf`` with scripts/pdf.py (its kernels with
    ``DPKIT_LANG=zh``); return ``pdf``.

    Raises
    ------
    subprocess.CalledProcessError
        If the one-page build fails.
    """
    import pdf as printing  # scripts/pdf.py, beside this script

    prepare()
    os.environ["DPKIT_LANG"] = "zh"
    printing.html_to_pdf(printing.build_singlehtml(SOURCE), pdf,
                         **printing.front_matter(SOURCE))
    return pdf


if __name__ == "__main__":
    if sys.argv[1:] == ["--prepare-only"]:
        prepare()
        sys.exit(0)
    if sys.argv[1:2] == ["--pdf"] and len(sys.argv) == 3:
        print(f"The zh edition as a PDF: {print_pdf(Path(sys.argv[2])).resolve()}")
        sys.exit(0)
    sys.exit(build(sys.argv[1:]))
