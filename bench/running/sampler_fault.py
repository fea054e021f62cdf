"""A sampler's own code that breaks: :class:`SamplerFault`, found by :func:`probe` before a run or read from an
exception by :func:`fault_of`.

Code someone else wrote (a user's sampler, a library's kernel) that raises, returns a state of another structure,
shape or dtype than it was given, cannot be traced by the JAX driver, or starts from a non-finite state is a
reported outcome (``Outcome.ERROR``), never the suite's traceback. The fault names that code: the innermost frame
of the exception's traceback that is not the suite's, Python's standard library or a numerical runtime
(``RUNTIMES``), with its file, function and line; for a fault found without an exception (a wrong shape, a
non-finite start), the function that produced it. A traceback whose frames are all the suite's and the runtimes'
is not a sampler's fault (:func:`fault_of` gives None): it is the suite's own error.

:func:`probe` runs what a driver runs first, on one chain, and checks it against the sampler contract
(``samplers/_contract.py``): ``start`` (``init``, then ``prime``) gives a State whose ``position`` has the target's
shape, a floating dtype and finite values; one step, traced by ``jax.jit`` for the JAX driver or called eagerly
for the NumPy and batched drivers, returns ``(State, Info)`` with the structure, shapes and dtypes of the State
it was given.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.draws import jax_draws, numpy_draws
from sgbench.samplers._contract import GradientOracle

# packages whose frames are the machinery the sampler calls, not the sampler: a fault is located above them
RUNTIMES = frozenset({"jax", "jaxlib", "numpy", "scipy", "torch", "optax", "chex", "ml_dtypes", "functorch"})
TRACING = (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
           jax.errors.TracerArrayConversionError, jax.errors.TracerIntegerConversionError,
           jax.errors.UnexpectedTracerError)


class ContractError(TypeError):
    """The sampler's code does not keep the contract its wrapper states (``where``: the author's function that
    broke it, "FILE:LINE, in NAME"); raised by the wrappers (``sgbench.bench.wrappers``), read by :func:`fault_of`."""

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where


@dataclasses.dataclass(frozen=True)
class SamplerFault:
    """What broke in ``sampler``'s code, in words (``what``), and where (``where``: "FILE:LINE, in FUNCTION", or
    "" where no code of the sampler's could be named); ``error``: the exception, if one was raised."""

    sampler: str
    what: str
    where: str = ""
    error: BaseException | None = None

    @property
    def line(self) -> str:
        """The fault on one line: what broke, and where."""
        return f"{self.what} ({self.where})" if self.where else self.what

    def __str__(self) -> str:
        return self.line

    def traceback_text(self) -> str:
        """The exception's full traceback (real line breaks), or "" without one."""
        if self.error is None:
            return ""
        return "".join(traceback.format_exception(self.error))


def _package(frame) -> str:
    return str(frame.f_globals.get("__name__", "")).partition(".")[0]


def _is_theirs(frame) -> bool:
    """Whether ``frame`` runs code that is neither the suite's, the standard library's nor a runtime's."""
    package = _package(frame)
    if package == "__main__":
        return True
    return bool(package) and package != "sgbench" and package not in RUNTIMES and package not in sys.stdlib_module_names


def located(error: BaseException) -> str:
    """"FILE:LINE, in FUNCTION" of the innermost frame of ``error``'s traceback (and its causes') that is the
    sampler's (:func:`_is_theirs`); "" where there is none."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        theirs = [(frame, line) for frame, line in traceback.walk_tb(error.__traceback__) if _is_theirs(frame)]
        if theirs:
            frame, line = theirs[-1]
            return f"{frame.f_code.co_filename}:{line}, in {frame.f_code.co_name}"
        error = error.__cause__ or error.__context__
    return ""


def defined_at(function) -> str:
    """"FILE:LINE, in NAME" where ``function`` is defined ("" where it cannot be told)."""
    function = inspect.unwrap(getattr(function, "func", function))
    code = getattr(function, "__code__", None)
    if code is None:
        return ""
    return f"{code.co_filename}:{code.co_firstlineno}, in {code.co_name}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def fault_of(error: BaseException, name: str, doing: str) -> SamplerFault | None:
    """The fault of sampler ``name`` that ``error`` shows, raised while it was ``doing`` (words such as "its step");
    None where no frame of the traceback is the sampler's (the suite's own error)."""
    if isinstance(error, ContractError):
        return SamplerFault(name, f"{name}: {error}", error.where, error)
    where = located(error)
    if not where:
        return None
    if isinstance(error, TRACING):
        return SamplerFault(name, f"{name}: {doing} cannot be traced by jax.jit, which the JAX driver compiles it with "
                                  f"({_first_line(error)}; a branch on a traced value needs jnp.where or lax.cond)",
                            where, error)
    return SamplerFault(name, f"{name}: {doing} raised {_first_line(error)}", where, error)


def _leaves(tree) -> dict:
    """Path (``state.position``) to leaf of a State."""
    return {"state" + jax.tree_util.keystr(path): leaf for path, leaf in jax.tree_util.tree_leaves_with_path(tree)}


def _dtype(leaf):
    return leaf.dtype if hasattr(leaf, "dtype") else jnp.result_type(leaf)


def _mismatch(given, returned) -> str:
    """How the State a step returned differs from the one it was given, in words ("" where it does not)."""
    before, after = jax.tree.structure(given), jax.tree.structure(returned)
    if before != after:
        return f"returns a state of another structure than it was given ({after} where it was given {before})"
    for (path, old), new in zip(_leaves(given).items(), _leaves(returned).values()):
        old_shape, new_shape = np.shape(old), np.shape(new)
        if old_shape != new_shape:
            return f"returns {path} of shape {new_shape}, where the state it was given has {old_shape}"
        old_dtype, new_dtype = _dtype(old), _dtype(new)
        if old_dtype != new_dtype:
            return f"returns {path} of dtype {new_dtype}, where the state it was given has {old_dtype}"
    return ""


def probe(sampler, target, params, position, backend: str, seed: int = 0) -> SamplerFault | None:
    """The fault of ``sampler`` on ``target`` at validated ``params`` from ``position`` (module docstring), or None:
    its start and one step, as the ``backend`` driver ("jax", "numpy", "batched") runs them."""
    name = getattr(sampler, "name", repr(sampler))
    eager = backend != "jax"
    oracle = GradientOracle.exact(target)
    start = np.array(position, dtype=np.float64) if eager else jnp.asarray(position)
    try:
        state = sampler.start(start, params, oracle)
    except Exception as error:  # the sampler's code: an outcome, named
        fault = fault_of(error, name, "its init")
        if fault is None:
            raise
        return fault
    where = defined_at(sampler.init)
    position = getattr(state, "position", None)
    if position is None:
        return SamplerFault(name, f"{name}: its init returns a {type(state).__name__} without a position", where)
    if np.shape(position) != (target.dim,):
        return SamplerFault(name, f"{name}: its init returns a position of shape {np.shape(position)}, where the "
                                  f"target has {target.dim} coordinates", where)
    if not jnp.issubdtype(jnp.result_type(position), jnp.floating):
        return SamplerFault(name, f"{name}: its init returns a position of dtype {jnp.result_type(position)}, not a "
                                  "floating dtype", where)
    if not np.all(np.isfinite(np.asarray(position))):
        return SamplerFault(name, f"{name}: its init gives a non-finite start (position "
                                  f"{np.array2string(np.asarray(position), precision=3, threshold=6)})", where)
    step = sampler.reference_step if eager else sampler.optimized_step
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    try:
        if eager:
            draws = numpy_draws(np.random.default_rng(seed), spec)
            returned = step(state, GradientOracle(target, draws["gradient"]), draws["sampler"], params)
        else:
            state = jax.tree.map(jnp.asarray, state)
            draws = jax_draws(jax.random.key(seed), spec, (), jnp.result_type(position))
            returned = jax.eval_shape(
                lambda s, d: step(s, GradientOracle(target, d["gradient"]), d["sampler"], params), state, draws)
    except Exception as error:  # the sampler's code: an outcome, named
        fault = fault_of(error, name, "its step")
        if fault is None:
            raise
        return fault
    where = defined_at(step)
    if not (isinstance(returned, tuple) and len(returned) == 2):
        return SamplerFault(name, f"{name}: its step returns a {type(returned).__name__}, not (State, Info)", where)
    wrong = _mismatch(state, returned[0])
    return SamplerFault(name, f"{name}: its step {wrong}", where) if wrong else None


def guarded(sampler, target, params, position, backend: str, seed: int, run):
    """``run()``, or the fault of ``sampler``'s own code: its start and first step checked first by :func:`probe` (from
    ``position``), then any exception of ``run`` that :func:`fault_of` names (one with no frame of the sampler's is
    raised: the suite's own)."""
    fault = probe(sampler, target, params, np.asarray(position, dtype=np.float64), backend, seed)
    if fault is not None:
        return fault
    try:
        return run()
    except Exception as error:  # the sampler's code broke mid-run: an outcome, naming that code
        fault = fault_of(error, getattr(sampler, "name", repr(sampler)), "its step")
        if fault is None:
            raise
        return fault
