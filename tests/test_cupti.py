"""The capture asks Kineto to release CUPTI when it stops (jupyter_brrr/capture/cupti.py)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
import torch

from jupyter_brrr.capture import cupti


def build(cuda: str | None, hip: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(version=SimpleNamespace(cuda=cuda, hip=hip))


@pytest.fixture
def no_teardown_set(monkeypatch: pytest.MonkeyPatch) -> None:
    # Set, then removed: monkeypatch puts back what was there before the set, so a value the
    # test's code sets does not leak into later tests.
    monkeypatch.setenv(cupti.TEARDOWN_VARIABLE, "")
    monkeypatch.delenv(cupti.TEARDOWN_VARIABLE)


@pytest.mark.parametrize(
    ("cuda", "hip", "release"),
    [
        ("12.6", None, (12, 6)),
        ("13.0", None, (13, 0)),
        ("11.8", None, (11, 8)),
        (None, "6.2.41133", None),
        (None, None, None),
        ("weird", None, None),
    ],
)
def test_the_cuda_release_is_read_from_torch_version(cuda, hip, release) -> None:
    assert cupti.cuda_release(build(cuda, hip)) == release


@pytest.mark.usefixtures("no_teardown_set")
def test_a_safe_cuda_build_gets_the_teardown_once_with_a_note() -> None:
    assert cupti.ask_teardown(build("12.8")) == cupti.TEARDOWN_NOTE
    assert os.environ[cupti.TEARDOWN_VARIABLE] == "1"
    assert cupti.ask_teardown(build("12.8")) is None  # said once, when it was set


@pytest.mark.usefixtures("no_teardown_set")
@pytest.mark.parametrize("torch_build", [build("12.4"), build(None, "6.2"), build(None)])
def test_old_cuda_rocm_and_cpu_builds_are_left_as_they_are(torch_build) -> None:
    assert cupti.ask_teardown(torch_build) is None
    assert cupti.TEARDOWN_VARIABLE not in os.environ


@pytest.mark.parametrize("chosen", ["0", "1", ""])
def test_a_value_the_user_chose_is_kept(monkeypatch: pytest.MonkeyPatch, chosen: str) -> None:
    monkeypatch.setenv(cupti.TEARDOWN_VARIABLE, chosen)
    assert cupti.ask_teardown(build("13.0")) is None
    assert os.environ[cupti.TEARDOWN_VARIABLE] == chosen


@pytest.mark.usefixtures("no_teardown_set")
def test_a_cpu_capture_leaves_the_environment_alone() -> None:
    assert cupti.TEARDOWN_VARIABLE not in os.environ  # nothing leaked from the tests above
    import jupyter_brrr

    report = jupyter_brrr.profile(lambda: torch.ones(8) * 2)
    assert cupti.TEARDOWN_VARIABLE not in os.environ
    assert cupti.TEARDOWN_NOTE not in report.notes
