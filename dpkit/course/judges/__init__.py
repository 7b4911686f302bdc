"""Hidden tests for the exercises whose answer is a randomized function (draft)."""

from dpkit.course.judges._base import Judgement
from dpkit.course.judges.noise import judge_gaussian_noise, judge_laplace_mechanism

__all__ = ["Judgement", "judge_gaussian_noise", "judge_laplace_mechanism"]
