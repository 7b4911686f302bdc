"""scripts/zh_book.py: the zh edition's project, generated from the English one."""

import importlib.util
from pathlib import Path

import pytest
import yaml
from myst_text import FRONT_MATTER

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("zh_book", ROOT / "scripts" / "zh_book.py")
zh_book = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zh_book)


def test_untranslated_page_gets_the_notice_below_its_title():
    page = FRONT_MATTER + "\n(ch-x)=\n# Title\n\nText.\n"
    marked = zh_book.with_notice(page)
    assert marked.startswith(FRONT_MATTER + "\n(ch-x)=\n# Title\n\n:::{note}\n"
                             + zh_book.NOTICE + "\n:::\n")
    assert marked.endswith("\nText.\n")


@pytest.mark.parametrize("page", ["Text.\n", FRONT_MATTER + "Text.\n"])
def test_a_page_without_a_title_gets_the_notice_on_top(page):
    marked = zh_book.with_notice(page)
    assert marked.index(zh_book.NOTICE) < marked.index("Text.")
    assert marked.startswith(FRONT_MATTER if page.startswith("---") else "\n:::{note}")


def test_the_zh_toc_is_the_english_one_page_for_page_then_the_glossary():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    zh = zh_book.zh_toc(toc)
    files = zh_book.toc_files(toc)
    assert zh_book.toc_files(zh) == [*files, zh_book.GLOSSARY]
    # The same parts, numbered the same: the chapter numbers are those of the English edition.
    assert [p.get("numbered") for p in zh["parts"]] == [p.get("numbered") for p in toc["parts"]]
    assert [p["caption"] for p in zh["parts"]] == ["章节", "附录"]
    assert toc["parts"][-1]["chapters"][-1] != {"file": zh_book.GLOSSARY}   # a copy was changed


def test_the_zh_config_is_chinese():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    zh = zh_book.zh_config(config)
    assert zh["sphinx"]["config"]["language"] == "zh_CN"
    assert zh["sphinx"]["config"]["html_context"]["edition"] == "zh"
    assert "{doc}" in zh["parse"]["myst_substitutions"]["zh_glossary"]
    assert "language" not in config["sphinx"]["config"]


def test_prepare_takes_the_translation_where_there_is_one(tmp_path):
    (tmp_path / "book" / "zh").mkdir(parents=True)
    for name in zh_book.SHARED:
        (tmp_path / "book" / name).mkdir()
    (tmp_path / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n"
                                       "  - caption: Chapters\n    numbered: true\n"
                                       "    chapters:\n      - file: book/laplace\n")
    (tmp_path / "book" / "intro.md").write_text(FRONT_MATTER + "# Intro\n")
    (tmp_path / "book" / "laplace.md").write_text(FRONT_MATTER + "# Laplace\n")
    (tmp_path / "book" / "zh" / "laplace.md").write_text(FRONT_MATTER + "# 拉普拉斯机制\n")
    (tmp_path / "book" / "zh" / "glossary.md").write_text("# 术语表\n")
    out = tmp_path / "_build" / "zh_src"
    status = zh_book.prepare(tmp_path, out)
    assert status == {"book/intro": "English", "book/laplace": "translated",
                      "book/glossary": "translated"}
    assert zh_book.NOTICE in (out / "book" / "intro.md").read_text()
    assert (out / "book" / "laplace.md").read_text() == FRONT_MATTER + "# 拉普拉斯机制\n"
    assert (out / "book" / "_static").resolve() == tmp_path / "book" / "_static"
    assert yaml.safe_load((out / "_config.yml").read_text())["title"] == zh_book.TITLE


_pdf_spec = importlib.util.spec_from_file_location("pdf", ROOT / "scripts" / "pdf.py")
pdf_script = importlib.util.module_from_spec(_pdf_spec)
_pdf_spec.loader.exec_module(pdf_script)


def test_the_words_the_pdf_adds_follow_the_edition(monkeypatch):
    """scripts/pdf.py's fixed words: English for book.pdf, Chinese for book-zh.pdf (printed
    with DPKIT_LANG=zh), and the title page of the zh edition's source in Chinese."""
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    english = pdf_script.words()
    assert english["contents"] == "Contents" and english["pages"].startswith("page <span")
    monkeypatch.setenv("DPKIT_LANG", "zh")
    chinese = pdf_script.words()
    assert chinese["contents"] == "目录" and chinese["introduction"] == "引言"
    assert chinese["pages"].startswith("第 <span") and chinese["pages"].endswith("</span> 页")
    for key in ("sliders", "controls"):
        assert "{settings}" in chinese[key] and "{listed}" in chinese[key]
        assert "Printed" not in chinese[key]
    config = zh_book.zh_config(yaml.safe_load((ROOT / "_config.yml").read_text()))
    assert config["author"] == zh_book.AUTHOR
    assert config["sphinx"]["config"]["nb_code_prompt_show"] == "显示代码单元"


def test_the_pdf_links_the_zh_glossary_to_the_repository(tmp_path):
    """book.pdf has no zh glossary page beside it: the bibliography's link points to the
    glossary's source in the repository; the zh edition's link (a {doc} role, a page of the
    same PDF) is left alone."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    link = pdf_script.singlehtml_config(ROOT)["parse"]["myst_substitutions"]["zh_glossary"]
    assert f'href="{config["repository"]["url"]}/blob/main/book/zh/glossary.md"' in link
    assert "../zh/book/glossary.html" not in link
    zh_source = tmp_path / "zh_src"
    zh_book.prepare(ROOT, zh_source)
    zh_link = pdf_script.singlehtml_config(zh_source)["parse"]["myst_substitutions"]
    assert zh_link["zh_glossary"].startswith("{doc}`术语表")
