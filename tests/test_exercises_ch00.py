"""Notebook 00's warm-up checker accepts the right answer, rejects wrong ones with a hint, never leaks."""

from tests.exercise_harness import exercise_tests

RIGHT = {"00.1": 3 * 4}
WRONG = {"00.1": [7, 34, 3 + 4, 12.5]}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)
