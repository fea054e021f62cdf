"""How deep in while loops an operation sits in a compiled XLA program (the text of
``jax.jit(f).lower(...).compile().as_text()``): a structural check of what runs once and what runs every
step, in place of timing it."""

from __future__ import annotations

import re

_HEAD = re.compile(r"^(ENTRY )?%(\S+) .*\{$")
_CALL = re.compile(r"\b(body|condition|calls|to_apply|true_computation|false_computation)=%([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")


def while_depths(program: str, opcode: str) -> list[int]:
    """The number of while-loop bodies around each ``opcode`` instruction of ``program``.

    A computation reached from the entry through several call sites counts the shallowest one, so a
    depth is a lower bound on how deeply every execution of the instruction is nested.

    Args:
        program: optimized HLO text of a compiled program.
        opcode: the HLO opcode, e.g. ``"fft"``.
    Returns:
        One depth per instruction with that opcode (0: outside every loop), in program order.
    """
    computations: dict[str, list[str]] = {}
    entry = current = None
    for line in program.splitlines():
        head = _HEAD.match(line)
        if head:
            current = head.group(2)
            computations[current] = []
            entry = current if head.group(1) else entry
        elif line == "}":
            current = None
        elif current is not None:
            computations[current].append(line)
    if entry is None:
        raise ValueError("program: no ENTRY computation; pass the text of a compiled XLA program")
    callers: dict[str, list[tuple[str, int]]] = {}
    for name, lines in computations.items():
        for line in lines:
            for kind, callee in _CALL.findall(line):
                callers.setdefault(callee, []).append((name, int(kind == "body")))
            for group in _BRANCHES.findall(line):
                for callee in re.findall(r"%([\w.\-]+)", group):
                    callers.setdefault(callee, []).append((name, 0))

    def depth(name: str) -> int:  # HLO's call graph has no cycles
        return 0 if name == entry else min(depth(caller) + inside for caller, inside in callers[name])

    instruction = re.compile(rf"\s{re.escape(opcode)}\(")
    return [depth(name) for name, lines in computations.items() for line in lines
            if instruction.search(line.split(", metadata=")[0])]
