"""A measured-cost table (chapter 13, "13_inference_compiler": implementation selection).

Bytes moved is a heuristic: it says a fused kernel beats two, not by how much a GEMM beats
a pooling window of the same size. A table measured on the machine says that: for each
kernel of a plan's schedule, its seconds per byte moved, timed by running its steps (as
the compiled replay runs them: plan.py) on the plan's own values (best of ``repeats``; the outputs are read back to numpy, so a lazy
device really computes them, which adds a copy to each timing). ``select`` then weighs each
edge by bytes x seconds per byte, an estimate in seconds; kernels the table lacks take its
"*" entry, the plan's overall seconds per byte.

    table = measure_costs(sess, feeds)
    sess = InferenceSession(model, measured_costs=table)
"""
import time

import stage2_tensor as tg



def measure_costs(session, feeds, repeats=3):
    """kernel name -> seconds per byte moved, timed on the plan ``session`` makes for ``feeds``."""
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"measure_costs: repeats must be a positive int, got {repeats!r}")
    if not session.optimize:
        raise ValueError("measure_costs: the session was made with optimize=False: it has no schedule")
    session.run(None, feeds)
    declared = {v.name: v for v in session.graph.inputs}
    env = {name: session._feed(declared[name], array) for name, array in feeds.items()}
    key = tuple((name, tuple(t.shape), t.dtype.name) for name, t in sorted(env.items()))
    plan = session._plans[key]
    env.update(plan.values)
    seconds, moved = {}, {}
    with tg.no_grad():
        for choice, steps in zip(plan.schedule.choices, plan.choice_steps):     # as the replay runs them
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                for step in steps:
                    step.run(env)
                outputs = [env[name] for name in steps[-1].outputs]
                for value in outputs:
                    if isinstance(value, tg.Tensor):
                        value.numpy()
                best = min(best, time.perf_counter() - start)
            if choice.bytes:
                seconds[choice.kernel] = seconds.get(choice.kernel, 0.0) + best
                moved[choice.kernel] = moved.get(choice.kernel, 0) + choice.bytes
    table = {k: seconds[k] / moved[k] for k in seconds}
    total = sum(moved.values())
    table["*"] = sum(seconds.values()) / total if total else 1.0
    return table
