"""The public surface: ``import thresher`` gives the names a user needs, documented."""

from __future__ import annotations

import dataclasses

import thresher


def test_every_public_name_resolves() -> None:
    for name in thresher.__all__:
        assert getattr(thresher, name) is not None, name
    for name in ("search", "Config", "Result", "ExitReason", "open_store", "ingest", "Policy"):
        assert name in thresher.__all__


def test_result_documents_every_field() -> None:
    for cls in (thresher.Result, thresher.ResultDocument):
        doc = cls.__doc__ or ""
        for f in dataclasses.fields(cls):
            assert f.name in doc, f"{cls.__name__}.{f.name} is not documented"


def test_the_policy_contract_is_the_harness_one() -> None:
    from thresher.harness.policy import BasePolicy, Policy

    assert thresher.Policy is Policy and thresher.BasePolicy is BasePolicy
