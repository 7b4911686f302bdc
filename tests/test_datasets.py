"""dpkit.datasets: the Adult data loads typed, and a missing or altered file is refused."""

import shutil

import pandas as pd
import pytest

from dpkit import datasets


def test_load_adult_shape_and_types():
    adult = datasets.load_adult()
    assert adult.shape == (datasets.ADULT_ROWS, 15) == (32_561, 15)
    assert list(adult.columns) == datasets.ADULT_COLUMNS
    assert adult["age"].dtype == "int64" and adult["capital-gain"].dtype == "int64"
    assert isinstance(adult["workclass"].dtype, pd.CategoricalDtype)
    assert set(adult["income"].cat.categories) == {"<=50K", ">50K"}
    # "?" is read as missing, never kept as a category
    assert "?" not in adult["workclass"].cat.categories
    assert adult["workclass"].isna().sum() == 1836
    assert adult["age"].between(17, 90).all()


def test_load_adult_returns_a_copy():
    first = datasets.load_adult()
    first.loc[0, "age"] = -1
    assert datasets.load_adult().loc[0, "age"] == 39


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "adult.csv"
    with pytest.raises(datasets.DataFileError, match=f"not found at {missing}"):
        datasets.load_adult(missing)


def test_altered_file_is_refused(tmp_path):
    altered = tmp_path / "adult.csv"
    shutil.copy(datasets.adult_path(), altered)
    with altered.open("a") as handle:
        handle.write("39,State-gov,1,Bachelors,13,Never-married,x,y,White,Male,0,0,40,US,<=50K\n")
    with pytest.raises(datasets.DataFileError, match="has been altered: sha256"):
        datasets.load_adult(altered)
