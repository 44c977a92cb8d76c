"""The job schema's two sides, jupyter_brrr/schema.py and js/src/schema.ts, agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_brrr import schema

TS = (Path(__file__).resolve().parents[1] / "js" / "src" / "schema.ts").read_text()


def _ts_constant(name: str) -> object:
    found = re.search(rf"export const {name} = (.*?);\n", TS, re.S)
    assert found, f"{name} is not declared in js/src/schema.ts"
    value = found.group(1).removesuffix(" as const")
    if value.startswith("["):
        return tuple(re.findall(r"'([^']*)'", value))
    return int(value) if value.isdigit() else value.strip("'")


@pytest.mark.parametrize(
    "name",
    [
        "JOB_SCHEMA_NAME",
        "JOB_SCHEMA_VERSION",
        "JOB_MIME_TYPE",
        "JOB_SPLIT_PARTS",
        "JOB_RANK_COLUMNS",
        "JOB_COLLECTIVE_COLUMNS",
        "JOB_STEP_COLUMNS",
        "JOB_CALL_COLUMNS",
        "JOB_LANE_COLUMNS",
    ],
)
def test_job_constants_agree(name: str) -> None:
    assert _ts_constant(name) == getattr(schema, name)


def test_job_summary_keys_agree() -> None:
    body = re.search(r"export interface IJobSummary \{(.*?)\n\}", TS, re.S).group(1)
    ts_keys = set(re.findall(r"^\s+(\w+)\??:", body, re.M))
    assert ts_keys == set(schema.JOB_SUMMARY_KEYS)


@pytest.mark.parametrize("name", ["REASONS", "CAUSES", "MODULE_COLUMNS"])
def test_advice_constants_agree(name: str) -> None:
    assert _ts_constant(name) == getattr(schema, name)


def _interface_keys(name: str) -> set[str]:
    body = re.search(rf"export interface {name} \{{(.*?)\n\}}", TS, re.S).group(1)
    return set(re.findall(r"^\s+(\w+)\??:", body, re.M))


def test_the_op_and_module_rows_have_the_columns_python_writes() -> None:
    assert _interface_keys("IOpRow") == set(schema.OPS_COLUMNS)
    assert _interface_keys("IModuleRow") == set(schema.MODULE_COLUMNS)


def test_a_recommendation_has_the_keys_the_advice_writes() -> None:
    import jupyter_brrr

    report = jupyter_brrr.load(
        Path(__file__).resolve().parent / "data" / "advice" / "odd_vocab_lm_head.slow.json.gz"
    )
    written = set(report.recommendations[0])
    assert written == _interface_keys("IRecommendation")
    assert set(report.recommendations[0]["ops"][0]) == _interface_keys("IAdviceOp")
