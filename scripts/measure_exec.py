#!/usr/bin/env python3
"""What an `exec` call costs to start, end to end through the real program.

Runs `claw-tui --provider demo -p "run true"` (the demo model makes one real `exec true`
call through the launcher and the sandbox) and `-p "hello"` (the same run without the
call), with throw-away HOME/XDG dirs and workspace and CLAW_TUI_DEMO_PACE_MS=0, and prints
min, median and max wall time of each, and the exec call's share: the median of
(run true − hello) over runs taken back to back. Given two binaries (`--binary A
--binary B`, e.g. a build before a change and one after), the runs alternate A, B, A,
B... so a machine that speeds up or slows down during the measurement moves both, and
the median of the pairwise ratios A/B (and of the exec call's differences) is printed.

    python3 scripts/measure_exec.py --binary target/debug/claw-tui --runs 30
    python3 scripts/measure_exec.py --binary /tmp/before --binary /tmp/after --runs 30

`--config TEXT` writes TEXT as the config file (e.g. '[exec]\\nnetwork = "deny"').
`--git` makes the workspace a repository first (`git init`: a config, hooks and
info/ to hold read-only and to look at for hard links before each command).
Not run by CI.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def run_once(binary, home, prompt):
    env = dict(os.environ)
    for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAW_TUI_PROVIDER", "CLAW_TUI_MODEL"]:
        env.pop(var, None)
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=os.path.join(home, "config"),
        XDG_DATA_HOME=os.path.join(home, "data"),
        XDG_STATE_HOME=os.path.join(home, "state"),
        CLAW_TUI_DEMO_PACE_MS="0",
    )
    args = [
        binary,
        "--config",
        os.path.join(home, "config.toml"),
        "--workspace",
        os.path.join(home, "ws"),
        "--provider",
        "demo",
        "--no-session",
        "-p",
        prompt,
    ]
    start = time.monotonic()
    done = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    took = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"{binary} -p {prompt!r} failed: {done.stderr.decode()}")
    if prompt.startswith("run ") and b"exit code: 0" not in done.stdout:
        raise SystemExit(f"{binary}: the exec call did not succeed: {done.stdout.decode()}")
    return took


def spread(values):
    ms = [v * 1000 for v in values]
    return f"min {min(ms):7.1f}  median {statistics.median(ms):7.1f}  max {max(ms):7.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--config", default="")
    parser.add_argument("--git", action="store_true")
    options = parser.parse_args()
    homes = {}
    for binary in options.binary:
        home = tempfile.mkdtemp(prefix="claw-measure-exec-")
        os.makedirs(os.path.join(home, "ws"))
        if options.git:
            subprocess.run(["git", "init", "-q", os.path.join(home, "ws")], check=True)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write(options.config.replace("\\n", "\n"))
        homes[binary] = home
    times = {b: {"run": [], "hello": [], "exec": []} for b in options.binary}
    for i in range(options.warmup + options.runs):
        for binary in options.binary:
            hello = run_once(binary, homes[binary], "hello")
            run = run_once(binary, homes[binary], "run true")
            if i >= options.warmup:
                times[binary]["hello"].append(hello)
                times[binary]["run"].append(run)
                times[binary]["exec"].append(run - hello)
    print(f"{options.runs} runs each after {options.warmup} warm-ups, {os.cpu_count()} cores")
    for binary in options.binary:
        t = times[binary]
        print(binary)
        print(f"  -p 'run true'   {spread(t['run'])}")
        print(f"  -p 'hello'      {spread(t['hello'])}")
        print(f"  the exec call   {spread(t['exec'])}")
    if len(options.binary) == 2:
        a, b = options.binary
        ratios = [x / y for x, y in zip(times[a]["run"], times[b]["run"])]
        print(f"run true: A/B, median of the pairs: {statistics.median(ratios):.3f}")
        deltas = [(x - y) * 1000 for x, y in zip(times[a]["exec"], times[b]["exec"])]
        print(f"the exec call: A - B, median of the pairs: {statistics.median(deltas):+.1f} ms")


if __name__ == "__main__":
    main()
