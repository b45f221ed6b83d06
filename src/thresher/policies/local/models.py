"""The local policy's learned models and their weights file (small models over named features).

What a model is and how it is stored; the candidate scorer that applies them to an
episode is :mod:`.scoring`.

A :class:`Model` is a logistic regression or a one-hidden-layer MLP over
standardized features, ``p = sigmoid(f(z))`` with ``z = (x - mean) / std``:

* logistic: ``f(z) = z·w + b``;
* mlp: ``f(z) = relu(z W1 + b1)·w2 + b2``;
* lambdarank: gradient-boosted trees trained with LightGBM's LambdaRank
  objective (per-question groups, NDCG@5), kept as LightGBM's own text model
  inside the weights file; ``f`` is the booster's raw score (an order, not a
  probability). A bagged one (an ensemble: boosters that differ only in their
  seed) keeps an optional ``base`` booster and its ``members``, and
  ``f = base(x) + mean_i member_i(x)`` (no base: 0): a warm start's shared trees
  are kept once as ``base`` and each member holds only the trees its seed added, so
  ``f`` is the mean of the members' full raw scores at the cost of one copy of the
  shared trees.

:class:`LocalWeights` bundles the models the local policy uses: ``base``
(chunk utility from the chunk and the queries), ``full`` (base plus links to
the retained context, for search candidates), ``final`` (the same features,
fit on the chunks episodes end with: the final ranking and prunes) and
``stop`` (the sufficiency signal), and optionally ``order`` (a LambdaRank
model that orders the retained chunks for the final answer, while the
probabilities of ``final`` still drive prunes and the stop signal). They are saved
as one JSON file; the default one ships in ``weights/local_policy.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from thresher.errors import ConfigError
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants, constants_from_section
from thresher.policies.local.features import BASE_FEATURES, LINK_FEATURES

__all__ = ["Model", "LocalWeights", "DEFAULT_WEIGHTS", "FUSIONS", "load_weights", "sigmoid"]

#: the weights that ship with the package
DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "weights" / "local_policy.json"
_FORMAT = 2
#: the format written when no model is an ensemble: such files stay readable by readers
#: of format 1 (an ensemble file is format 2, which they refuse rather than misread)
_PLAIN_FORMAT = 1
#: the fusions a weights file can be fit under (``meta.fusion``): ``plain`` RRF, or the
#: index's ``fitted`` fusion weights (``thresher fit-fusion``)
FUSIONS = ("plain", "fitted")
#: the column layouts the policy's feature rows come in (base; base and link): a
#: model fit before a feature was added reads its own columns from them by name
_LAYOUTS: dict[int, tuple[str, ...]] = {
    len(BASE_FEATURES): BASE_FEATURES,
    len(BASE_FEATURES) + len(LINK_FEATURES): BASE_FEATURES + LINK_FEATURES,
}


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass(frozen=True)
class Model:
    """One scoring model over named features.

    Attributes:
        features: the column names it expects, in order.
        kind: ``logistic``, ``mlp`` or ``lambdarank``.
        mean, std: standardization of each column (identity for lambdarank: trees
            need none).
        params: ``w``, ``b`` (logistic), ``W1``, ``b1``, ``w2``, ``b2`` (mlp),
            ``model`` (lambdarank: LightGBM's text model), or ``members`` and
            ``base`` (a bagged lambdarank: the members' text models and the shared
            trees' or None; :attr:`bagged`).
    """

    features: tuple[str, ...]
    kind: str
    mean: np.ndarray
    std: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def bagged(self) -> bool:
        """Whether this is a bagged lambdarank model (an ensemble of boosters)."""
        return self.kind == "lambdarank" and "members" in self.params

    @property
    def bag(self) -> int:
        """The number of boosters whose raw scores are averaged (1 unless bagged)."""
        return len(self.params["members"]) if self.bagged else 1

    @cached_property
    def _booster(self) -> Any:
        """The LightGBM booster of a lambdarank model, built once from its text."""
        import lightgbm

        return lightgbm.Booster(model_str=str(self.params["model"]))

    @cached_property
    def _ensemble(self) -> tuple[Any, list[Any]]:
        """A bagged model's boosters (base or None, members), built once from their text."""
        import lightgbm

        base = self.params.get("base")
        return (
            lightgbm.Booster(model_str=str(base)) if base is not None else None,
            [lightgbm.Booster(model_str=str(m)) for m in self.params["members"]],
        )

    def _lambdarank_logits(self, x: np.ndarray) -> np.ndarray:
        """The raw score of the rows (one booster's, or a bagged model's ``f``)."""
        # one booster for every session: LightGBM's predict is safe to call from
        # several threads on one model (each call builds its own predictor; the
        # C API guards the booster)
        rows = np.asarray(x, dtype=np.float64)
        if not self.bagged:
            return np.asarray(self._booster.predict(rows, num_threads=1), dtype=np.float64)
        base, members = self._ensemble
        out = np.zeros(len(rows))
        for member in members:
            out += member.predict(rows, num_threads=1)
        out /= len(members)
        if base is not None:
            # the shared trees read their own columns, the first ones (a warm start's
            # members may read more)
            out += base.predict(rows[:, : base.num_feature()], num_threads=1)
        return out

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Raw scores of the rows of ``x`` (shape ``(n, len(features))``)."""
        if x.shape[0] == 0:
            return np.zeros(0)
        x = self._columns(x)
        if x.shape[1] != len(self.features):
            raise ConfigError(
                f"scorer expects {len(self.features)} features, got {x.shape[1]}; "
                "retrain the local policy (thresher train-policy)"
            )
        if self.kind == "lambdarank":
            return self._lambdarank_logits(x)
        # in place where an operation makes a fresh array: each element is computed as
        # ``(x - mean) / std`` and so on would compute it (elementwise, the same bits),
        # without the allocations (a policy scores a few dozen rows at a time)
        z = x - self.mean
        z /= self.std
        p = self.params
        if self.kind == "logistic":
            out = np.asarray(z @ p["w"])
            out += float(p["b"])
            return out
        hidden = z @ p["W1"]
        hidden += p["b1"]
        np.maximum(hidden, 0.0, out=hidden)
        out = np.asarray(hidden @ p["w2"])
        out += float(p["b2"])
        return out

    @cached_property
    def _picks(self) -> dict[int, list[int] | None]:
        """Per row width of a policy layout, the columns of this model's features in it
        (None when the layout lacks one of them or is this model's own)."""
        out: dict[int, list[int] | None] = {}
        for width, names in _LAYOUTS.items():
            if names == self.features or not set(self.features) <= set(names):
                out[width] = None
            else:
                out[width] = [names.index(f) for f in self.features]
        return out

    def _columns(self, x: np.ndarray) -> np.ndarray:
        """``x`` (a row layout of the policy) cut to this model's features by name: a
        weights file fit before a feature existed keeps working, without it, and a model
        whose columns are a layout's in another order (a warm start's own columns, then
        the ones it added) reads them in its order. Rows as wide as a layout are read as
        that layout; other rows as this model's own columns."""
        picks = self._picks.get(x.shape[1])
        return x if picks is None else x[:, picks]

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probabilities (0..1) for the rows of ``x``."""
        # :func:`sigmoid` in place on the fresh array of logits (the same bits)
        out = self.logits(x)
        out *= 0.5
        np.tanh(out, out=out)
        out += 1.0
        out *= 0.5
        return out

    def to_dict(self) -> dict[str, Any]:
        params: dict[str, Any] = (
            _lambdarank_params(self.params)
            if self.kind == "lambdarank"
            else {k: np.asarray(v).tolist() for k, v in self.params.items()}
        )
        return {
            "features": list(self.features),
            "kind": self.kind,
            "mean": self.mean.tolist(),
            "std": self.std.tolist(),
            "params": params,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Model:
        kind = str(data["kind"])
        if kind not in ("logistic", "mlp", "lambdarank"):
            raise ConfigError(f"unknown scorer kind '{kind}'; expected logistic, mlp or lambdarank")
        params: dict[str, Any] = (
            _lambdarank_params(data["params"])
            if kind == "lambdarank"
            else {k: np.asarray(v, dtype=np.float64) for k, v in data["params"].items()}
        )
        return cls(
            tuple(data["features"]),
            kind,
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["std"], dtype=np.float64),
            params,
        )


def _lambdarank_params(params: dict[str, Any]) -> dict[str, Any]:
    """A lambdarank model's params as stored: ``model`` (one booster's text), or
    ``base`` (text or None) and ``members`` (texts, at least one) of a bagged one.
    Raises ``ValueError`` on an empty bag (KeyError when neither is there)."""
    if "members" not in params:
        return {"model": str(params["model"])}
    members = [str(m) for m in params["members"]]
    if not members:
        raise ValueError("a bagged lambdarank model needs at least one member")
    base = params.get("base")
    return {"base": str(base) if base is not None else None, "members": members}


@dataclass(frozen=True)
class LocalWeights:
    """The local policy's models and how they were made.

    Attributes:
        base: chunk utility from base features.
        full: chunk utility from base and link features (final ranking, prunes).
        stop: P(the top k already holds every gold document hopping on would find)
            from state features.
        final: utility of retained chunks for the final ranking and prunes (base and
            link features, fit on the chunks an episode ends with); ``full`` when absent.
        meta: training provenance (data files, counts, held-out figures); its
            ``fusion`` names the fusion the episodes the models were fit on ran with
            (:attr:`fusion`).
        controls: LocalPolicy settings chosen with the weights (e.g. ``stop_at``,
            ``hop_k`` tuned by reward on synthetic tasks,
            :mod:`thresher.train.local.tune`); the policy's defaults otherwise.
        order: a LambdaRank model ordering the retained chunks for the final answer
            (base and link features); absent: ``ranker``'s probabilities order them.
        constants: the policy's constants (the file's ``constants`` section,
            :mod:`~thresher.policies.local.constants`; today's values when absent).
    """

    base: Model
    full: Model
    stop: Model | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    final: Model | None = None
    controls: dict[str, Any] = field(default_factory=dict)
    order: Model | None = None
    constants: Constants = DEFAULT_CONSTANTS

    @property
    def fusion(self) -> str:
        """The fusion of hybrid searches these weights were fit under, one of
        :data:`FUSIONS`: ``meta.fusion``, ``plain`` when absent (the shipped file: its
        rows came from indexes with no fitted fusion). The local policy runs them under
        it (:attr:`~thresher.policies.local.policy.LocalPolicy.fitted_fusion`)."""
        return str(self.meta.get("fusion", "plain"))

    @property
    def ranker(self) -> Model:
        """The model that ranks retained chunks (``final``, else ``full``)."""
        return self.final if self.final is not None else self.full

    def save(self, path: str | Path) -> Path:
        """Write the weights as JSON; returns the path."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        models = (self.base, self.full, self.stop, self.final, self.order)
        bagged = any(m is not None and m.bagged for m in models)
        data = {
            "format": _FORMAT if bagged else _PLAIN_FORMAT,
            "base": self.base.to_dict(),
            "full": self.full.to_dict(),
            "stop": self.stop.to_dict() if self.stop is not None else None,
            "final": self.final.to_dict() if self.final is not None else None,
            "meta": self.meta,
            **({"controls": self.controls} if self.controls else {}),
            **({"order": self.order.to_dict()} if self.order is not None else {}),
            "constants": self.constants.to_section(),
        }
        out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return out


def load_weights(path: str | Path | None = None) -> LocalWeights:
    """Read weights written by :meth:`LocalWeights.save` (default: the shipped file).

    A file read before and unchanged since (same size and modification time) is
    not parsed again: a policy is built per episode, and parsing the file and its
    LightGBM model costs milliseconds. The weights are immutable, so sharing is safe.

    Raises:
        ConfigError: the file is missing, unreadable, not a weights file, or names an
            unknown ``meta.fusion``.
    """
    p = Path(path) if path is not None else DEFAULT_WEIGHTS
    try:
        st = p.stat()
    except OSError as exc:
        raise ConfigError(
            f"cannot read local policy weights {p}: {exc.strerror}; "
            "run `thresher train-policy` to make them"
        ) from exc
    return _read_weights_once(str(p.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=8)
def _read_weights_once(path: str, size: int, mtime_ns: int) -> LocalWeights:
    """The weights file at ``path`` as it is now (keyed by its size and modification time:
    a rewritten file is read again). A function of the file alone, so every policy
    built on one file shares its read-only models; nothing of an episode is kept."""
    return _read_weights(Path(path))


def _read_weights(p: Path) -> LocalWeights:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read local policy weights {p}: {exc.strerror}; "
            "run `thresher train-policy` to make them"
        ) from exc
    except ValueError as exc:
        raise ConfigError(f"local policy weights {p} are not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format", 0) > _FORMAT or "base" not in data:
        raise ConfigError(
            f"{p} is not a local policy weights file of format <= {_FORMAT} (one written "
            "by a newer thresher needs that version: upgrade, or run `thresher adapt` again)"
        )
    try:
        stop, final, order = data.get("stop"), data.get("final"), data.get("order")
        weights = LocalWeights(
            Model.from_dict(data["base"]),
            Model.from_dict(data["full"]),
            Model.from_dict(stop) if stop else None,
            dict(data.get("meta") or {}),
            Model.from_dict(final) if final else None,
            dict(data.get("controls") or {}),
            Model.from_dict(order) if order else None,
            constants_from_section(data.get("constants"), str(p)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"local policy weights {p} are malformed: {exc!r}") from exc
    if weights.fusion not in FUSIONS:
        raise ConfigError(
            f"local policy weights {p}: meta.fusion is {weights.fusion!r}, not one of "
            f"{', '.join(FUSIONS)}; fix the file or run `thresher adapt` again"
        )
    return weights
