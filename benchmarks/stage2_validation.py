"""Stage-2 predictions (theory.stage2.predictions, theory.stage2.horizon) against the
simulator: both regime boundaries, the noisy switch time (flow, and GD at the
not-overfitting preset: part e), the late harmful test accuracy and the gap slope.

    python benchmarks/stage2_validation.py [--parts a,b,c,d,e] [--seeds 3] \
        [--out benchmarks/results/stage2_validation.json]

One process, BLAS limited to one thread. Event times are read on a geometric grid of
``--per-decade`` points per decade of steps (flow engine, dense output), boundaries are
interpolated in log ||mu|| between grid points. Test metrics come from fresh test sequences
drawn in chunks (clean, balanced), independent of the training draws.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from theory.stage2 import laws as stage2_laws
from theory.stage2 import predictions as stage2_predictions
from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import preset
from verify.sim.data import generate
from verify.sim.engines import make_engine
from verify.sim.kernels import softmax

#: Boundaries reported by the package's simulator runs (3 seeds) that the brief quotes.
REFERENCE = {
    "benign_not_mu_d2000_n20": {1e3: 185.0, 1e5: 290.0, 1e8: 388.0},
    "harmful_benign_mu_1000_steps": {500: 5.3, 2000: 7.4, 8000: 10.3},
    "harmful_accuracy": {1e3: 0.87, 1e12: 0.74, 1e30: 0.67},
    "gap_slope_per_decade": 2.39,
}


def noisy_fitted_fraction(engine, data) -> float:
    logits = engine.train_logits()
    f = (softmax(logits) * data.train_scores).sum(axis=1)
    return float(np.mean(data.y_train[data.noisy] * f[data.noisy] > 0))


def first_half_fitted(config, max_steps: float, per_decade: int) -> float:
    """First grid step at which at least half of the noisy samples are fitted (inf if none)."""
    data = generate(config)
    engine = make_engine(config, data)
    for step in np.geomspace(1.0, max_steps, int(per_decade * math.log10(max_steps)) + 1):
        engine.advance_to(float(step))
        if noisy_fitted_fraction(engine, data) >= 0.5:
            return float(step)
    return math.inf


def crossing(mus, times, horizon) -> float:
    """The ||mu|| where the first-fit step crosses ``horizon`` (log-linear interpolation)."""
    times = np.asarray(times, dtype=float)
    above = np.flatnonzero(times > horizon)
    if above.size == 0 or above[0] == 0:
        return math.nan
    j = above[0]
    t0 = math.log(times[j - 1])
    t1 = math.log(min(times[j], 1e300))
    w = (math.log(horizon) - t0) / (t1 - t0) if np.isfinite(t1) else 0.5
    return float(math.exp(math.log(mus[j - 1]) + w * (math.log(mus[j]) - math.log(mus[j - 1]))))


def part_a(seeds: int, per_decade: int) -> dict:
    horizons = (1e3, 1e5, 1e8)
    base = preset("benign", engine="flow", test_size=0, steps=int(3 * horizons[-1]))
    model, training = base.model, base.training
    mus = np.geomspace(150, 460, 17)
    per_seed = []
    for seed in range(seeds):
        times = [
            first_half_fitted(
                base.replace(mu_norm=float(mu), seed=seed), 3 * horizons[-1], per_decade
            )
            for mu in mus
        ]
        per_seed.append([crossing(mus, times, h) for h in horizons])
        print("a seed", seed, np.round(per_seed[-1], 1), flush=True)
    rows = []
    for index, horizon in enumerate(horizons):
        estimate = stage2_predictions.benign_not_boundary(model, training, horizon)
        measured = float(np.nanmedian([row[index] for row in per_seed]))
        rows.append(
            {
                "steps": horizon,
                "predicted": estimate.value,
                "model_error": estimate.model_error,
                "error_source": estimate.error_source,
                "separable_law": stage2_laws.separable_boundary(model, training, horizon),
                "measured_median": measured,
                "measured_per_seed": [row[index] for row in per_seed],
                "reference": REFERENCE["benign_not_mu_d2000_n20"][horizon],
                "relative_error": measured / estimate.value - 1,
            }
        )
    return {"benign_not_boundary": rows}


def switch_steps(config, max_steps: float, per_decade: int) -> list[float]:
    """First grid step at which each noisy sample's argmax leaves its relevant token; the
    measurement is the step by which half of them have left (per seed, then the median)."""
    data = generate(config)
    engine = make_engine(config, data)
    noisy = np.flatnonzero(data.noisy)
    out = np.full(noisy.size, math.inf)
    for step in np.geomspace(1.0, max_steps, int(per_decade * math.log10(max_steps)) + 1):
        engine.advance_to(float(step))
        left = engine.train_logits()[noisy].argmax(axis=1) != 0
        out[left & ~np.isfinite(out)] = step
        if np.all(np.isfinite(out)):
            break
    return out.tolist()


def part_b(seeds: int, per_decade: int) -> dict:
    rows = []
    for mu in (25.0, 50.0, 100.0, 140.0, 185.0):
        config = preset("benign", mu_norm=mu, engine="flow", test_size=0, steps=10**6)
        estimate = stage2_predictions.noisy_switch_time(config.model, config.training)
        halves = []
        for seed in range(seeds):
            times = sorted(switch_steps(config.replace(seed=seed), 1e6, per_decade))
            halves.append(times[(len(times) + 1) // 2 - 1])  # half of the noisy samples
        measured = float(np.median(halves))
        rows.append(
            {
                "mu": mu,
                "n_snr2": config.model.n * config.model.snr**2,
                "predicted_steps": estimate.steps,
                "model_error": estimate.model_error,
                "error_source": estimate.error_source,
                "token": estimate.token,
                "measured_half_switched_steps": measured,
                "measured_per_seed": halves,
                "relative_error": measured / estimate.steps - 1,
            }
        )
        print("b", mu, round(estimate.steps, 1), measured, halves, flush=True)
    return {"noisy_switch": rows}


def fresh_test_metrics(
    engine, data, model, count: int, seed: int, chunk: int = 250
) -> tuple[float, float]:
    """(test accuracy, fraction selecting R) on ``count`` fresh clean sequences."""
    q = engine.query()
    rng = np.random.default_rng(seed)
    signal = np.array(
        [[g.own, g.opposite] for g in model.groups for _ in range(g.count)], dtype=float
    )
    correct = relevant = 0
    for start in range(0, count, chunk):
        m = min(chunk, count - start)
        y = np.where(np.arange(start, start + m) % 2 == 0, 1, -1)
        own = np.where(y[:, None] == 1, data.mu_plus, data.mu_minus)
        other = np.where(y[:, None] == 1, data.mu_minus, data.mu_plus)
        x = model.sigma_eps * rng.standard_normal((m, model.T, model.d))
        x += signal[None, :, :1] * own[:, None, :] + signal[None, :, 1:] * other[:, None, :]
        s = softmax(x @ q)
        f = (s * (x @ data.nu)).sum(axis=1)
        correct += int(np.sum(y * f > 0))
        relevant += int(np.sum(np.argmax(x @ q, axis=1) == 0))
    return correct / count, relevant / count


def part_c(seeds: int) -> dict:
    rows = []
    for d in (500, 2000, 8000):
        config = preset("benign", d=d, engine="reduced", test_size=0, steps=1000)
        estimate = stage2_predictions.harmful_benign_boundary(config.model, config.training, 1000)
        mus = estimate.value * np.array([0.85, 0.93, 1.0, 1.07, 1.15])
        fractions = []
        for mu in mus:
            values = []
            for seed in range(seeds):
                run_config = config.replace(mu_norm=float(mu), seed=seed)
                data = generate(run_config)
                engine = make_engine(run_config, data)
                engine.advance_to(1000)
                values.append(
                    fresh_test_metrics(engine, data, run_config.model, 1000, 10_000 + seed)[1]
                )
            fractions.append(float(np.mean(values)))
        measured = (
            float(np.interp(0.5, fractions, mus))
            if fractions[0] < 0.5 < fractions[-1]
            else math.nan
        )
        rows.append(
            {
                "d": d,
                "predicted": estimate.value,
                "model_error": estimate.model_error,
                "grid": mus.tolist(),
                "selects_relevant": fractions,
                "measured": measured,
                "reference": REFERENCE["harmful_benign_mu_1000_steps"][d],
                "relative_error": measured / estimate.value - 1,
            }
        )
        print("c", d, round(estimate.value, 3), measured, fractions, flush=True)
    horizons = (1e3, 1e12, 1e30)
    config = preset("harmful", engine="flow", test_size=0, steps=10**30)
    predicted = stage2_predictions.late_test_metrics(config.model, config.training, horizons)
    accuracy = {h: [] for h in horizons}
    for seed in range(seeds):
        run_config = config.replace(seed=seed)
        data = generate(run_config)
        engine = make_engine(run_config, data)
        for horizon in horizons:
            engine.advance_to(horizon)
            accuracy[horizon].append(
                fresh_test_metrics(engine, data, run_config.model, 4000, 20_000 + seed)[0]
            )
    trajectory = [
        {
            "steps": h,
            "predicted": p.accuracy,
            "model_error": p.accuracy_error,
            "argmax_limit": p.argmax_accuracy,
            "measured_mean": float(np.mean(accuracy[h])),
            "measured": accuracy[h],
            "reference": REFERENCE["harmful_accuracy"][h],
        }
        for h, p in zip(horizons, predicted, strict=True)
    ]
    print("c harmful accuracy", trajectory, flush=True)
    return {"harmful_benign_boundary": rows, "harmful_accuracy": trajectory}


def part_d(seeds: int) -> dict:
    config = preset("benign", engine="flow", test_size=0, steps=10**12)
    estimate = stage2_predictions.gap_slope(config.model, config.training)
    steps = np.geomspace(1e6, 1e12, 25)
    slopes, pis = [], []
    for seed in range(seeds):
        run_config = config.replace(seed=seed)
        data = generate(run_config)
        engine = make_engine(run_config, data)
        engine.advance_to(1e3)
        pi_start = engine.parameter_norms()["p_norm"] ** 2
        gaps = []
        clean = ~data.noisy
        for step in steps:
            engine.advance_to(float(step))
            logits = engine.train_logits()[clean]
            gaps.append(float(np.mean(logits[:, 0] - logits[:, 1:].max(axis=1))))
        slopes.append(float(np.polyfit(np.log10(steps), gaps, 1)[0]))
        pis.append((pi_start, engine.parameter_norms()["p_norm"] ** 2))
    from theory.stage2 import flow as stage2

    run = stage2.solve(
        stage2.population(config.model, config.training), 5e9, tau_eval=np.array([5.0, 5e9])
    )
    return {
        "gap_slope": {
            "predicted": estimate.value,
            "model_error": estimate.model_error,
            "measured": slopes,
            "measured_mean": float(np.mean(slopes)),
            "reference": REFERENCE["gap_slope_per_decade"],
            "relative_error": float(np.mean(slopes)) / estimate.value - 1,
        },
        "p_norm_sq": {"predicted_1e3_1e12": run.pi.tolist(), "measured_1e3_1e12": pis},
    }


def gd_switch_steps(config, max_steps: int) -> list[float]:
    """GD at the configuration's step: the first step at which each noisy sample's argmax
    token is not its relevant one (inf if not within ``max_steps``)."""
    data = generate(config)
    engine = make_engine(config, data)
    noisy = np.flatnonzero(data.noisy)
    out = np.full(noisy.size, math.inf)
    relevant = int(np.flatnonzero(data.groups == 0)[0])
    for step in range(1, max_steps + 1):
        engine.advance_to(float(step))
        left = engine.train_logits()[noisy].argmax(axis=1) != relevant
        out[left & ~np.isfinite(out)] = step
        if np.all(np.isfinite(out)):
            break
    return out.tolist()


def part_e(seeds: int) -> dict:
    """The noisy switch under GD at the not-overfitting preset: the median over noisy
    samples and seeds of the first step each leaves R, against the GD map's
    (:func:`theory.stage2.horizon.switch_time`) and the flow's."""
    from theory.stage2.horizon import switch_time

    config = preset("not-overfitting", test_size=0, steps=3000, engine="reduced")
    gd = switch_time(config.model, config.training)
    flow = stage2_predictions.noisy_switch_time(config.model, config.training)
    steps = [gd_switch_steps(config.replace(seed=seed), 3000) for seed in range(seeds)]
    measured = float(np.median(np.concatenate(steps)))
    print("e", gd.value, gd.model_error, flow.steps, measured, flush=True)
    return {
        "gd_switch": {
            "predicted_steps": gd.value,
            "model_error": gd.model_error,
            "error_source": gd.error_source,
            "flow_steps": flow.steps,
            "measured_median_steps": measured,
            "measured_per_seed": steps,
            "relative_error": measured / gd.value - 1,
        }
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="a,b,c,d")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--per-decade", type=int, default=40)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/stage2_validation.json")
    )
    arguments = parser.parse_args()
    started = time.perf_counter()
    results: dict = {"provenance": provenance(), "seeds": arguments.seeds}
    runners = {
        "a": lambda: part_a(arguments.seeds, arguments.per_decade),
        "b": lambda: part_b(2, arguments.per_decade),
        "c": lambda: part_c(arguments.seeds),
        "d": lambda: part_d(arguments.seeds),
        "e": lambda: part_e(8),
    }
    with threadpool_limits(limits=1):
        for part in arguments.parts.split(","):
            results.update(runners[part]())
            results["wall_seconds"] = time.perf_counter() - started
            atomic_write_json(arguments.out, results)
    print(f"wrote {arguments.out} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
