"""MyST Markdown text shared by the course tests that write a chapter of their own."""

#: The front matter of a chapter (jupytext's MyST format, the python3 kernel), up to and
#: including its closing ``---`` line: a test's chapter is ``FRONT_MATTER`` + its body.
FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
