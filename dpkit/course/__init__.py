"""Course tooling: the book's chapters as teaching material, and grading.

Nothing here is differential privacy. These modules turn the book's MyST Markdown chapters
into material for a class and grade what students hand in:

* :mod:`dpkit.course.myst` renders MyST (theorems, exercises, cross-references, citations)
  as the Markdown plain Jupyter shows, numbered as in the book;
* :mod:`dpkit.course.notebooks` writes a teacher and a student notebook per chapter;
* :mod:`dpkit.course.assignments` builds an nbgrader course from the chapters' exercises
  and grades submissions into ``grades.csv``.

The command line is ``python -m dpkit.course notebooks|assignments|grade`` (see
``python -m dpkit.course --help``), behind ``make notebooks``, ``make assignments`` and
``make grade``.

The DP library never imports this package: no module of :mod:`dpkit` outside
``dpkit/course/`` depends on it, and it needs Jupyter tooling (jupytext, nbformat, nbgrader)
the mechanisms do not. It may import anything in :mod:`dpkit`.
"""
