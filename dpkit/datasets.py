"""The data the book uses: the UCI Adult census extract, checksum verified.

The file ``data/adult.csv`` ships with the book (provenance and licence in
``data/README.md``); an installed dpkit carries both as the package data
``dpkit._data`` (``pyproject.toml`` maps the repository's ``data/`` there).
:func:`load_adult` refuses a missing or altered file rather than silently analysing
different data.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pandas as pd

__all__ = ["ADULT_COLUMNS", "ADULT_ROWS", "ADULT_SHA256", "DataFileError", "adult_path",
           "load_adult"]

#: sha256 of data/adult.csv as shipped (see data/README.md).
ADULT_SHA256 = "c30ce1e55a965b04950321870db74c19f4aa437120a692f32e72f6a4fa31c418"
#: Number of rows (people) in the UCI Adult training set.
ADULT_ROWS = 32_561
_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
#: Column names, in file order (the file's ``income-per-year`` is renamed ``income``).
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income"]


def _shipped_adult() -> Path:
    """The installed package data, else the repository's ``data/adult.csv``."""
    try:
        return Path(resources.files("dpkit._data").joinpath("adult.csv"))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "data" / "adult.csv"


_DEFAULT_PATH = _shipped_adult()
_cache: dict[Path, pd.DataFrame] = {}


class DataFileError(RuntimeError):
    """A data file is missing or differs from the published one."""


def adult_path() -> Path:
    """Return the path of the shipped ``adult.csv`` (in the package when dpkit is installed
    from a wheel, else the repository's ``data/adult.csv``)."""
    return _DEFAULT_PATH


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_adult(path: str | Path | None = None) -> pd.DataFrame:
    """Load the UCI Adult training set (32,561 people, 15 columns) as a typed DataFrame.

    Numeric columns (age, fnlwgt, education-num, capital-gain, capital-loss,
    hours-per-week) are ``int64``; the others are ``category``, with the file's ``?``
    read as missing. The column ``income-per-year`` is renamed ``income``. The result is
    cached per path; a copy is returned, so callers may modify it.

    Parameters
    ----------
    path : str or Path, optional
        Defaults to the book's ``data/adult.csv``.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    DataFileError
        If the file is missing or its sha256 differs from :data:`ADULT_SHA256`
        (the message names the path and both digests).

    References
    ----------
    Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5XW20 (CC BY 4.0).
    """
    file = Path(path) if path is not None else _DEFAULT_PATH
    file = file.resolve()
    if file not in _cache:
        if not file.is_file():
            raise DataFileError(f"Adult data file not found at {file}; it ships with the book "
                                f"as data/adult.csv (see data/README.md for how to obtain it)")
        found = _sha256(file)
        if found != ADULT_SHA256:
            raise DataFileError(f"Adult data file {file} has been altered: sha256 {found}, "
                                f"expected {ADULT_SHA256} (see data/README.md)")
        frame = pd.read_csv(file, na_values="?", skipinitialspace=True)
        frame = frame.rename(columns={"income-per-year": "income"})
        for column in frame.columns:
            frame[column] = (frame[column].astype("int64") if column in _NUMERIC
                             else frame[column].astype("category"))
        _cache[file] = frame
    return _cache[file].copy()
