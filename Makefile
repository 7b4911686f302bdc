# Differential Privacy, Interactively — the two commands are `make book` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
VENDOR := book/_static/vendor
VENDOR_STAMP := $(VENDOR)/.installed
# What only the tests load (axe-core, for the browser test's accessibility audit).
TEST_VENDOR := .vendor
# Widgets in the built book are pre-rendered and switched client-side (see dpkit/widgets.py).
export DPKIT_WIDGET_MODE := static
export PYDEVD_DISABLE_FILE_VALIDATION := 1

# The edition of make notebooks, assignments and grade: LANG=zh (or LANG=en) on make's command
# line. make also imports LANG from the environment, where it is the shell's locale
# (C.UTF-8, en_US.UTF-8 …): that never chooses the edition. A LANG given on the command line
# would reach every command's environment as its locale, so they run in C.UTF-8 instead.
EDITION := en
ifeq ($(origin LANG),command line)
ifeq ($(LANG),zh)
EDITION := zh
else ifneq ($(LANG),en)
$(error LANG must be en or zh (the edition of make notebooks, assignments and grade), got '$(LANG)')
endif
override LANG := C.UTF-8
endif
# Where each edition's notebooks and course go: the English ones where they always were; the zh
# notebooks beside them, and the zh course in a course folder of its own (its own nbgrader
# configuration, course id and grades).
ifeq ($(EDITION),zh)
NOTEBOOKS := _build/notebooks/zh
COURSE := _build/course-zh
LANG_FLAG := --lang zh
else
NOTEBOOKS := _build/notebooks
COURSE := _build/course
LANG_FLAG :=
endif

.PHONY: help book test lab notebooks assignments grade pdf exam slides bench bench-peers lint chapter vendor install clean

help:
	@echo "make book       install into .venv and build the book into _build/html, the"
	@echo "                Simplified Chinese edition into _build/html/zh"
	@echo "make test       install, run the tests, build the book strictly, test it in a browser"
	@echo "make lab        JupyterLab on the chapters (as notebooks, live sliders), the student notebooks"
	@echo "                and the assignments; make lab ARGS=--instructor adds nbgrader's Formgrader"
	@echo "make pdf        print the whole book into _build/book.pdf (offline, with chromium),"
	@echo "                the Simplified Chinese edition into _build/book-zh.pdf"
	@echo "make exam CHAPTERS=laplace,gaussian  an exam and its answer key from the exam bank"
	@echo "                (course/exams/), as HTML and PDF in _build/exam (instructor material)"
	@echo "make slides     one offline slide deck per chapter (reveal.js) into _build/slides,"
	@echo "                from the chapter sources and the figures of make book (run first if needed)"
	@echo "make notebooks  write teacher and student .ipynb copies into _build/notebooks"
	@echo "make assignments  write an nbgrader course, one assignment per chapter, into _build/course"
	@echo "make grade SUBMISSIONS=dir   grade dir/<student>/<chapter>.ipynb (sandboxed) into _build/course/grades/"
	@echo "                LANG=zh: the same from the Simplified Chinese pages, into _build/notebooks/zh"
	@echo "                and _build/course-zh (make notebooks LANG=zh, make assignments LANG=zh …)"
	@echo "make bench      print the benchmark tables"
	@echo "make bench-peers  install OpenDP, dp-accounting, diffprivlib, Tumult Core into their own env; compare"
	@echo "make chapter CH=laplace   execute one chapter and build it strictly on its own"
	@echo "make clean      remove builds (keeps .venv and the course's grades in _build/course/grades)"

install: $(STAMP)
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@# The book's kernels talk over loopback; keep ipykernel's transport notice out of the build log.
	mkdir -p $(VENV)/etc/ipython
	echo '{"IPKernelApp": {"log_level": "ERROR"}}' > $(VENV)/etc/ipython/ipython_kernel_config.json
	touch $@

# MathJax, RequireJS and the ipywidgets HTML manager, from the npm registry, so that the
# rendered pages load nothing from a CDN; reveal.js for the slide decks and axe-core for the
# browser test into .vendor/, outside the book.
vendor: $(VENDOR_STAMP)
$(VENDOR_STAMP): scripts/vendor.sh
	bash scripts/vendor.sh $(VENDOR) $(TEST_VENDOR)
	touch $@

# The English edition, then the Simplified Chinese one (scripts/zh_book.py: generated from
# book/zh/ and the English pages not yet translated, built with DPKIT_LANG=zh, copied to
# _build/html/zh/).
book: $(STAMP) $(VENDOR_STAMP)
	$(BIN)/jupyter-book build . --keep-going
	$(BIN)/python scripts/zh_book.py --keep-going
	@echo "The book: $(CURDIR)/_build/html/index.html (中文版: $(CURDIR)/_build/html/zh/index.html)"

test: $(STAMP) $(VENDOR_STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not browser" tests dpkit
	$(BIN)/jupyter-book build . -W -n --keep-going
	$(BIN)/python scripts/zh_book.py -W -n --keep-going
	$(BIN)/python scripts/slides.py
	$(BIN)/python -m pytest -m browser tests

chapter: $(STAMP) $(VENDOR_STAMP)
	@test -n "$(CH)" || { echo "usage: make chapter CH=<name of a file in book/ without .md>"; exit 2; }
	$(BIN)/python scripts/build_chapter.py $(CH)

# python -m dpkit.course lab (dpkit/course/lab.py) through scripts/lab.py, which puts this
# checkout's dpkit first; ARGS go to it (--instructor, jupyter lab options).
lab: $(STAMP)
	$(BIN)/python scripts/lab.py $(ARGS)

# The book as one page (singlehtml), printed by Debian's chromium: scripts/pdf.py; then the
# Simplified Chinese edition the same way (scripts/zh_book.py --pdf).
pdf: $(STAMP) $(VENDOR_STAMP)
	$(BIN)/python scripts/pdf.py _build/book.pdf
	$(BIN)/python scripts/zh_book.py --pdf _build/book-zh.pdf

# The exam bank (course/exams/, instructor material) assembled by scripts/exam.py, printed
# with scripts/pdf.py's chromium; an unknown chapter is refused with the list of valid ones.
exam: $(STAMP) $(VENDOR_STAMP)
	@test -n "$(CHAPTERS)" || { echo "usage: make exam CHAPTERS=laplace,gaussian (chapters of course/exams/)"; exit 2; }
	$(BIN)/python scripts/exam.py "$(CHAPTERS)" --out _build/exam

# One reveal.js deck per chapter (scripts/slides.py): the statements from book/*.md, the
# figures and widget frames from the notebooks make book executed (_build/jupyter_execute),
# so make book runs first when they are missing; make test builds the decks after its build.
slides: $(STAMP) $(VENDOR_STAMP)
	@test -d _build/jupyter_execute/book || $(MAKE) book
	$(BIN)/python scripts/slides.py

notebooks: $(STAMP)
	$(BIN)/python -m dpkit.course $(strip notebooks $(LANG_FLAG) book $(NOTEBOOKS))

assignments: $(STAMP)
	$(BIN)/python -m dpkit.course $(strip assignments $(LANG_FLAG) book $(COURSE))
	@echo "Hand out $(COURSE)/release/<chapter>/<chapter>.ipynb; keep $(COURSE)/source."

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<dir of <student>/<chapter>.ipynb>"; exit 2; }
	@test -d $(COURSE)/source || $(MAKE) assignments
	$(BIN)/python -m dpkit.course grade $(COURSE) "$(SUBMISSIONS)" $(GRADE_FLAGS)

bench: $(STAMP)
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script; done

# dpkit beside its peers, in a separate environment (benchmarks/peers/.venv, pinned lock
# installed without resolution: see benchmarks/peers/requirements.txt); the working tree's
# dpkit is on PYTHONPATH. Writes benchmarks/results/peers.json, which book/performance.md shows.
PEERS_VENV := benchmarks/peers/.venv
PEERS_STAMP := $(PEERS_VENV)/.installed
$(PEERS_STAMP): benchmarks/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet --no-deps -r benchmarks/peers/requirements.txt
	touch $@

bench-peers: $(PEERS_STAMP)
	PYTHONPATH=$(CURDIR) $(PEERS_VENV)/bin/python benchmarks/peers/run.py

# The courses' grades (_build/course/grades and _build/course-zh/grades: gradebook, manual
# scores, secret) are never deleted; everything else the builds wrote is.
clean:
	rm -rf .pytest_cache .hypothesis .ruff_cache
	if [ -d _build ]; then find _build -mindepth 1 -maxdepth 1 ! -name course ! -name course-zh -exec rm -rf {} +; fi
	for course in _build/course _build/course-zh; do \
	  if [ -d $$course ]; then find $$course -mindepth 1 -maxdepth 1 ! -name grades -exec rm -rf {} +; fi; \
	done
