"""Licences and feedback: the licence files exist and say what they cover, the footer of every
page states both licences and how to report an error, and the repository's address (from
which the "Open issue" button is made) is set in one place.

The rendered footer and button are checked in the built pages by ``tests/test_browser.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
#: Jupyter Book's own default repository: the button would send readers to its tracker.
JUPYTER_BOOK_DEFAULT = "https://github.com/executablebooks/jupyter-book"


def test_licence_files_exist_and_cover_code_text_and_data() -> None:
    code = (ROOT / "LICENSE").read_text()
    assert code.startswith("MIT License\n")
    assert "Copyright (c) 2026 The Differential Privacy, Interactively authors" in code
    assert "LICENSE-CC-BY-4.0" in code and "data/README.md" in code
    text = (ROOT / "LICENSE-CC-BY-4.0").read_text()
    assert text.startswith("Creative Commons Attribution 4.0 International")
    assert "Section 1 – Definitions." in text and "Section 8 – Interpretation." in text
    data = (ROOT / "data" / "README.md").read_text()
    assert re.search(r"\| licence \| Creative Commons Attribution 4\.0 International "
                     r"\(CC BY 4\.0\) \|", data)


def test_footer_states_both_licences_and_how_to_report_an_error() -> None:
    footer = " ".join(CONFIG["html"]["extra_footer"].split())
    assert "Text and figures: <a href=\"https://creativecommons.org/licenses/by/4.0/\">" \
           "CC BY 4.0</a>" in footer
    assert "Code (dpkit and the chapters' code cells): MIT" in footer
    assert "UCI Adult data" in footer
    assert "Report it on the repository's issue tracker" in footer
    assert '"Open issue" entry of the repository menu' in footer


def test_the_issue_button_is_on_and_the_repository_set_once() -> None:
    assert CONFIG["html"]["use_issues_button"] is True
    url = CONFIG["repository"]["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url), url
    assert url != JUPYTER_BOOK_DEFAULT
    # one place: no other file of the book or the package spells the address
    for path in [ROOT / "README.md", *ROOT.glob("book/*.md"), *ROOT.glob("dpkit/**/*.py")]:
        assert url not in path.read_text(), f"{path.name} repeats the repository's address"


def test_readme_states_the_licences_and_how_to_report() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Licence", 1)[1]
    assert "MIT" in section and "`LICENSE`" in section and "`LICENSE-CC-BY-4.0`" in section
    assert "## Reporting an error" in readme and "`repository.url` in `_config.yml`" in readme
