r"""What a candidate of ``sgbench validate`` claims to be, and its hyperparameters per target.

A candidate claims a suite sampler by ``--claims NAME``, an adapter's ``claims``, or its own name when that is
registered; ``--claims none`` drops any claim. A claimed sampler whose steps are the candidate's own (the
registered object, or steps from its module) is the candidate *itself*: it is never compared with itself.
Otherwise the candidate's hyperparameters are translated to the claimed sampler's: by an adapter's
``to_reference``, or by renaming (``--map CANDIDATE=REFERENCE``) and adding the claimed sampler's own
(``--reference-param``); the claimed sampler's hyperparameters left at their defaults are listed, so that a
missing ``form`` or ``integrator`` cannot silently select another discretisation.
"""

from __future__ import annotations

import dataclasses

from sgbench import samplers
from sgbench.bench.adapters import AdaptedSampler

STEP_PARTS = ("optimized_step", "reference_step")
NO_CLAIM = "none"


@dataclasses.dataclass(frozen=True)
class Claim:
    """The suite sampler ``name`` a candidate claims (None: none). ``itself``: the candidate is that
    sampler (``why`` says how), so it is not compared with it; ``rename``: candidate hyperparameter names
    to the reference's; ``extra``: reference hyperparameters the candidate has no name for; ``adapter``:
    the adapter whose ``to_reference`` translates."""

    name: str | None
    itself: bool = False
    why: str = ""
    rename: tuple = ()
    extra: tuple = ()
    adapter: object = None

    def translate(self, params: dict) -> dict:
        """The reference's hyperparameters for the candidate's ``params``; ValueError naming a name the
        reference does not have, with the ``--map`` that would fix it."""
        if self.itself:
            return dict(params)
        if self.adapter is not None:
            return {**self.adapter.to_reference(params), **dict(self.extra)}
        names = dict(self.rename)
        out = {names.get(k, k): v for k, v in params.items()} | dict(self.extra)
        fields = {f.name for f in dataclasses.fields(samplers.get(self.name).Params)}
        unknown = sorted(set(out) - fields)
        if unknown:
            raise ValueError(f"the suite's {self.name!r} has no hyperparameter {unknown[0]!r} (it has: "
                             f"{', '.join(sorted(fields))}); map the candidate's name onto one with "
                             f"--map {unknown[0]}=NAME, or drop the claim with --claims none")
        return out

    def steps_per_call(self, params: dict) -> int:
        """How many of the reference's steps one step of the candidate makes at ``params`` (an adapter's
        ``reference_steps``; 1 otherwise)."""
        return 1 if self.adapter is None else self.adapter.reference_steps(params)

    def defaults(self, reference_params: dict) -> dict:
        """The reference's hyperparameters left at their defaults by ``reference_params``."""
        fields = dataclasses.fields(samplers.get(self.name).Params)
        return {f.name: f.default for f in fields
                if f.name not in reference_params and f.default is not dataclasses.MISSING}


def resolve_claim(sampler, claims: str | None = None, rename: dict | None = None,
                  extra: dict | None = None) -> Claim:
    """The claim of ``sampler``: ``claims`` ("none": no claim), else an adapter's ``claims`` (a wrapped function's:
    ``sgbench.bench.wrappers``), else, for a sampler that is not an adapter, its own name if registered.

    Args:
        sampler: the candidate.
        claims: a suite sampler's name, "none", or None (the default above).
        rename: candidate hyperparameter names to the claimed sampler's (``--map``).
        extra: hyperparameters of the claimed sampler the candidate has no name for (``--reference-param``).

    Returns:
        The Claim; ``itself`` when the registered sampler of that name is ``sampler`` or its
        ``optimized_step`` and ``reference_step`` come from the same modules as ``sampler``'s.
        ValueError: ``claims`` names no suite sampler, or ``rename``/``extra`` are given without a claim.
    """
    rename, extra = dict(rename or {}), dict(extra or {})
    adapted = sampler.claims if isinstance(sampler, AdaptedSampler) else None
    own = sampler.name if not isinstance(sampler, AdaptedSampler) and sampler.name in samplers.names() else None
    name = None if claims == NO_CLAIM else (claims or adapted or own)
    if name is None:
        if rename or extra:
            raise ValueError("--map and --reference-param need a claimed suite sampler (--claims NAME)")
        return Claim(None)
    if name not in samplers.names():
        raise ValueError(f"claims must name a suite sampler ({', '.join(samplers.names())}) or be 'none', got {name!r}")
    registered = samplers.get(name)
    modules = [getattr(sampler, part).__module__ for part in STEP_PARTS]
    itself = registered is sampler or modules == [getattr(registered, part).__module__ for part in STEP_PARTS]
    if itself and (rename or extra):
        raise ValueError(f"--map and --reference-param translate a candidate's hyperparameters to the claimed "
                         f"sampler's, but {sampler.name} is the suite's {name!r} itself")
    if registered is sampler:
        why = f"it is the suite's registered {name!r} itself (module {modules[0]})"
    elif modules == [getattr(registered, part).__module__ for part in STEP_PARTS]:
        why = f"its steps come from the module of the suite's registered {name!r} ({modules[0]})"
    else:
        if rename and name == adapted:
            raise ValueError(f"--map: {sampler.name} is an adapter, whose to_reference translates its hyperparameters")
        return Claim(name, rename=tuple(rename.items()), extra=tuple(extra.items()),
                     adapter=sampler if name == adapted else None)
    return Claim(name, itself=True, why=why)


def split_params(params: dict, keys) -> dict:
    """Per target key, its hyperparameters: the plain ``NAME`` entries of ``params``, overridden by its
    ``KEY:NAME`` entries. ValueError naming a ``KEY:`` prefix that names no chosen target."""
    plain = {k: v for k, v in params.items() if ":" not in k}
    out = {key: dict(plain) for key in keys}
    for name, value in params.items():
        if ":" in name:
            key, _, field = name.partition(":")
            if key not in out:
                raise ValueError(f"--param {name}: {key!r} is not among the targets validated "
                                 f"({', '.join(out)}); per-target hyperparameters are TARGET:NAME=VALUE")
            out[key][field] = value
    return out
