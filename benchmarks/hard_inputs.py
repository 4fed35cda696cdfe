"""Bad inputs, extreme values and faults, each run as a new user would run it: the exit
status and the message every one of them ends with.

Each case runs in a fresh process (the command line, a Python snippet against the public
API, or a shell line for limits, signals and concurrency) in a scratch directory, and the
table prints its exit status and the last line it wrote to stderr (or, for a snippet, the
exception it raised). No case may end in a traceback: that is the point of the table.

    python benchmarks/hard_inputs.py [--only WORD] [--skip-slow] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


@dataclass(frozen=True)
class Case:
    """One case: ``kind`` is ``cli`` (arguments of ``python -m verify``), ``python`` (a
    snippet) or ``shell`` (a bash line, ``$VERIFY`` runs the command line)."""

    name: str
    kind: str
    payload: str
    slow: bool = False


SMALL = "--d 40 --steps 20 --test-size 10 --no-progress"
API = "import verify, numpy as np\nfrom theory.foundation.validation import InvalidParameter\n"

CASES = (
    Case("run --mu-norm 1e-300", "cli", "run --mu-norm 1e-300 --no-progress"),
    Case("assumptions --mu-norm 1e-300", "cli", "assumptions --mu-norm 1e-300"),
    Case("predict --mu-norm 1e99", "cli", "predict --mu-norm 1e99"),
    Case("predict --sigma-eps 1e-99", "cli", "predict --sigma-eps 1e-99"),
    Case("run --out, a 300-character name", "cli", f"run {SMALL} --out {{tmp}}/{'x' * 300}"),
    Case(
        "resume record {}",
        "cli",
        "sweep-boundaries --quick --workers 0 --no-progress --out {tmp}/empty_record",
    ),  # fmt: skip
    Case(
        "resume record null",
        "cli",
        "sweep-boundaries --quick --workers 0 --no-progress --out {tmp}/null_record",
    ),  # fmt: skip
    Case(
        "resume record with a wrong type",
        "cli",
        "sweep-boundaries --quick --workers 0 --no-progress --out {tmp}/edited_record",
    ),  # fmt: skip
    Case("verify.simulate(None)", "python", API + "verify.simulate(None)"),
    Case("verify.simulate('benign')", "python", API + "verify.simulate('benign')"),
    Case("verify.simulate({'d': 10})", "python", API + "verify.simulate({'d': 10})"),
    Case("verify.predict(None)", "python", API + "verify.predict(None)"),
    Case("verify.write_run(None, p)", "python", API + "verify.write_run(None, '{tmp}/w')"),
    Case("RunConfig(model=None)", "python", API + "verify.RunConfig(model=None)"),
    Case("cfg.replace(model=None)", "python", API + "verify.preset('benign').replace(model=None)"),
    Case("init_scale=1e-300", "python", API + "verify.preset('benign', init_scale=1e-300)"),
    Case(
        "all-zero W0",
        "python",
        API + "c = verify.preset('benign', d=20)\nverify.simulate(c, W0=np.zeros((20, 20)))",
    ),  # fmt: skip
    Case(
        "wrong-shape W0",
        "python",
        API + "c = verify.preset('benign', d=20)\nverify.simulate(c, W0=np.ones((3, 3)))",
    ),  # fmt: skip
    Case("preset('benign', mu_norm=[20])", "python", API + "verify.preset('benign', mu_norm=[20])"),
    Case("run --attention-test-samples 1e9", "cli", f"run {SMALL} --attention-test-samples 1e9"),
    Case("reproduce --steps 1e13", "cli", "reproduce --out {tmp}/r --steps 1e13"),
    Case("run --steps 1e30", "cli", "run --steps 1e30 --no-progress"),
    Case(
        "run --steps 1e30 --engine flow",
        "cli",
        "run --engine flow --steps 1e30 --d 40 --test-size 10 --no-progress",
    ),  # fmt: skip
    Case("predict --steps -1", "cli", "predict --steps -1"),
    Case("predict --steps 0", "cli", "predict --steps 0"),
    Case("predict --n 1", "cli", "predict --n 1"),
    Case("run --n 1", "cli", f"run --n 1 {SMALL}"),
    Case(
        "run --seed 2^53 + 1",
        "shell",
        "$VERIFY run --seed 9007199254740993 --d 20 --steps 1 "
        "--test-size 4 --no-progress 2>/dev/null | grep '^seed' >&2",
    ),  # fmt: skip
    Case("run --mu-norm -inf", "cli", "run --mu-norm -inf"),
    Case("non-finite run (--nu-scale 1e60)", "cli", f"run --nu-scale 1e60 {SMALL}"),
    Case(
        "run --d 1e6 under ulimit -v 8G",
        "shell",
        "ulimit -v 8000000; $VERIFY run --d 1e6 --no-progress",
    ),  # fmt: skip
    Case(
        "data-from, every label flipped",
        "shell",
        "$VERIFY run --data-from {tmp}/flipped.npz "
        '--steps 5 --no-progress --out {tmp}/flipped >/dev/null && python -c "import json; '
        "r = json.load(open('{tmp}/flipped/config.json'))['data_file']; "
        "print(r['noisy_count'], r['sha256'][:12])\" >&2",
    ),  # fmt: skip
    Case("data-from, an all-zero W0", "cli", "run --data-from {tmp}/zero_w0.npz --no-progress"),
    Case(
        "realworld run --out an existing file",
        "cli",
        "realworld run --dataset mnist --n 20 --eta 0.1 --out {tmp}/a_file",
    ),  # fmt: skip
    Case(
        "realworld run --out read-only",
        "cli",
        "realworld run --dataset mnist --n 20 --eta 0.1 --out /proc/benign-attention-out",
    ),  # fmt: skip
    Case(
        "realworld run, an earlier run.json",
        "cli",
        "realworld run --dataset mnist --n 20 --eta 0.1 --out {tmp}/earlier",
    ),  # fmt: skip
    Case("run --engine mp-flow (benign preset)", "cli", "run --engine mp-flow --no-progress"),
    Case(
        "realworld run, first on a data set (empty feature cache)",
        "shell",
        "(BENIGN_ATTENTION_FEATURES={tmp}/features timeout 900 $VERIFY realworld run "
        "--dataset mnist --n 20 --eta 0.1 --protocol fullbatch-adam --epochs 3 --no-progress "
        "2>&1 >/dev/null) | grep -m1 caching >&2",
        slow=True,
    ),
    Case(
        "two runs on one --out",
        "shell",
        "$VERIFY run --d 40 --steps 300000 --test-size 20 --no-progress --out {tmp}/shared "
        ">/dev/null 2>&1 & first=$!; while [ ! -e {tmp}/shared/.claim ]; do sleep 0.2; done; "
        "$VERIFY run --d 40 --steps 20 --no-progress --out {tmp}/shared 2>{tmp}/shared.err; "
        "code=$?; wait $first; echo first exit $?, files: $(ls {tmp}/shared) >&2; "
        "cat {tmp}/shared.err >&2; exit $code",
        slow=True,
    ),  # fmt: skip
    Case(
        "two phase-diagram --quick on one --out",
        "shell",
        "$VERIFY phase-diagram --quick --steps 20000 --workers 0 --no-progress --out {tmp}/pd "
        ">/dev/null 2>&1 & first=$!; while [ ! -e {tmp}/pd/.claim ]; do sleep 0.2; done; "
        "$VERIFY phase-diagram --quick --steps 20000 --workers 0 --no-progress --out {tmp}/pd "
        "2>{tmp}/pd.err; code=$?; wait $first; echo first exit $?, figures: "
        "$(ls -a {tmp}/pd/figures) >&2; cat {tmp}/pd.err >&2; exit $code",
        slow=True,
    ),  # fmt: skip
    Case(
        "SIGHUP during a run",
        "shell",
        "$VERIFY run --d 40 --steps 100000 --test-size 10 "
        "--no-progress --out {tmp}/hup >/dev/null & sleep 12; kill -HUP $!; wait $!",
        slow=True,
    ),  # fmt: skip
    Case(
        "rerun after a killed run",
        "shell",
        "$VERIFY run --d 40 --steps 200000 --test-size 10 "
        "--no-progress --out {tmp}/killed >/dev/null 2>&1 & sleep 15; kill -9 $!; wait $!; "
        f"$VERIFY run {SMALL} --out {{tmp}}/killed 2>&1 >/dev/null | grep note >&2",
        slow=True,
    ),  # fmt: skip
)


def prepare(tmp: Path) -> None:
    """The files the cases read."""
    from verify.sim.config import preset
    from verify.sim.data import generate, save_npz

    (tmp / "a_file").write_text("x")
    for name, text in (
        ("empty_record", "{}"),
        ("null_record", "null"),
    ):
        (tmp / name / "runs").mkdir(parents=True)
        (tmp / name / "runs" / "0123456789abcdef0123.json").write_text(text)
    edited = tmp / "edited_record" / "runs"
    edited.mkdir(parents=True)
    from verify.runtime.store import ResultStore

    ResultStore(edited).save("0123456789abcdef0123", {"key": "0123456789abcdef0123",
                                                      "result": {"noisy_fitted": 0.5}})  # fmt: skip
    path = edited / "0123456789abcdef0123.json"
    path.write_text(path.read_text().replace("0.5", '"oops"'))
    (tmp / "earlier").mkdir()
    (tmp / "earlier" / "run.json").write_text("{}")
    config = preset("benign", d=20, n=6, eta=0.0, test_size=4)
    data = generate(config)
    flipped = type(data)(**{**data.__dict__, "y_clean": -data.y_train})
    save_npz(tmp / "flipped.npz", flipped)
    save_npz(tmp / "zero_w0.npz", data, W0=np.zeros((20, 20)))


def command_of(case: Case, tmp: Path) -> list[str]:
    payload = case.payload.replace("{tmp}", str(tmp))
    if case.kind == "cli":
        return [PYTHON, "-m", "verify", *payload.split()]
    if case.kind == "python":  # the API's errors are exceptions: show the one raised
        body = textwrap.indent(payload, "    ")
        wrapped = (
            f"import sys\ntry:\n{body}\nexcept (TypeError, ValueError) as error:\n"
            "    print(f'{type(error).__name__}: {error}', file=sys.stderr)\n"
            "    sys.exit(2)\n"
        )
        return [PYTHON, "-c", wrapped]
    return ["bash", "-c", payload.replace("$VERIFY", f"{PYTHON} -m verify")]


def run_case(case: Case, tmp: Path, timeout: float) -> tuple[int | str, str, float]:
    """Exit status (or ``timeout``), the last stderr line, and the wall time."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command_of(case, tmp),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        return "timeout", "", time.perf_counter() - started
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    traceback = any(line.startswith("Traceback") for line in lines)
    output = [line for line in done.stdout.splitlines() if line.strip()]
    last = lines[-1] if lines else (output[-1] if output else "")
    if traceback:
        last = "TRACEBACK: " + last
    return done.returncode, last, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="cases whose name contains this text")
    parser.add_argument("--skip-slow", action="store_true", help="leave out the slow cases")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", help="write the Markdown table here too")
    args = parser.parse_args()
    rows = ["| case | exit | last line on stderr | seconds |", "|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    with tempfile.TemporaryDirectory(prefix="hard-inputs-") as scratch:
        tmp = Path(scratch)
        prepare(tmp)
        for case in CASES:
            if args.only not in case.name or (args.skip_slow and case.slow):
                continue
            code, last, seconds = run_case(case, tmp, args.timeout)
            shown = textwrap.shorten(last.replace("|", "\\|"), 400).replace(str(tmp), "TMP")
            row = f"| {case.name} | {code} | {shown} | {seconds:.1f} |"
            rows.append(row)
            print(row, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
