#!/usr/bin/env python3
"""How much an idle session with cron jobs grows on disk.

What it does, per scenario:
  1. writes JOBS cron jobs firing every EVERY seconds into a throw-away XDG data dir, in
     the `jobs.json` format claw-tui writes: with one shared anchor, so they fire
     together (the worst case for notifications that wait), or with `--spread` their
     anchors spread over the interval, as jobs added one by one are (the worst case for
     the job list's changes: one fire after another);
  2. runs `claw-tui --mode rpc --provider demo` on that workspace with its stdin held
     open and nothing sent: the only activity is the jobs firing, each fire delivered to
     the demo model as a notification;
  3. after a warm-up, samples the size of every file claw-tui keeps for the session (the
     session file, its event log and the other side files) and of `jobs.json`, and again
     after MINUTES; reports the growth per minute by file, the share of each kind of
     line in what was added, and the disk cost of one job per day (total growth per
     minute x 1440 / JOBS).

Usage (not part of CI):
  cargo build
  python3 scripts/measure_cron_growth.py --bin target/debug/claw-tui
  python3 scripts/measure_cron_growth.py --jobs 1000 --every 5 --spread --minutes 1

The figures are bytes on disk, the same for a debug or a release build; the exit code
is 0 either way.
"""

import argparse
import collections
import datetime
import json
import os
import subprocess
import tempfile
import time


def fnv1a_48(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h & 0xFFFFFFFFFFFF


def cron_slug(workspace):
    """The cron store's directory name (crates/claw-runtime/src/runtime/cron/store.rs, workspace_slug)."""
    name = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_"
                   for c in os.path.basename(workspace))[:40] or "root"
    return f"{name}-{fnv1a_48(workspace):012x}"


def write_jobs(data_home, workspace, jobs, every, spread):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

    def stamp(i):
        offset = datetime.timedelta(seconds=every * i / jobs) if spread else datetime.timedelta()
        return (now + offset).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    records = [{
        "id": f"cron-{i}", "name": f"job {i}",
        "message": f"Check the build status and report anything new (job {i}).",
        "schedule": {"kind": "every", "seconds": every, "anchor": stamp(i)},
        "created_at": stamp(i), "paused": False, "done": False,
        "handled_until": stamp(i), "runs": [],
    } for i in range(1, jobs + 1)]
    directory = os.path.join(data_home, "claw-tui", "cron", cron_slug(workspace))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with open(os.path.join(directory, "jobs.json"), "w") as out:
        json.dump({"version": 1, "workspace": workspace, "next_id": jobs + 1, "jobs": records},
                  out, indent=2)


def sizes(data_home):
    """Every file under the data dir, by path: its size."""
    found = {}
    for root, _, files in os.walk(os.path.join(data_home, "claw-tui")):
        for name in files:
            path = os.path.join(root, name)
            try:
                found[path] = os.path.getsize(path)
            except OSError:
                pass
    return found


def kind_of(path):
    name = os.path.basename(path)
    for suffix in (".events.jsonl", ".requests.jsonl", ".streaming", ".inbox", ".damaged"):
        if name.endswith(suffix):
            return suffix[1:]
    if name == "jobs.json":
        return "jobs.json"
    if name.endswith(".jsonl") and "/sessions/" in path:
        return "session"
    return name


def line_kinds(path, start):
    """Bytes added after `start`, by the kind of line (`type` or event-log key)."""
    shares = collections.Counter()
    with open(path, "rb") as f:
        f.seek(start)
        for line in f:
            try:
                value = json.loads(line)
            except ValueError:
                shares["(unreadable)"] += len(line)
                continue
            if "type" in value:
                key = value["type"]
                if key == "message":
                    key = f"message/{value.get('message', {}).get('role', '?')}"
            else:
                key = next((k for k in value if k != "us"), "?")
                if key in ("agent", "runtime") and isinstance(value[key], dict):
                    key = f"{key}/{value[key].get('type', '?')}"
            shares[key] += len(line)
    return shares


def measure(bin_path, jobs, every, spread, warmup, minutes):
    with tempfile.TemporaryDirectory(prefix="claw-cron-growth-") as tmp:
        workspace = os.path.realpath(os.path.join(tmp, "ws"))
        os.makedirs(workspace)
        env = dict(os.environ)
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
            env.pop(key, None)
        env.update({
            "XDG_DATA_HOME": os.path.join(tmp, "data"),
            "XDG_STATE_HOME": os.path.join(tmp, "state"),
            "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
            "HOME": tmp,
        })
        write_jobs(env["XDG_DATA_HOME"], workspace, jobs, every, spread)
        # --config must name a file that exists.
        os.makedirs(os.path.join(tmp, "config"), exist_ok=True)
        open(os.path.join(tmp, "config", "config.toml"), "a").close()
        child = subprocess.Popen(
            [bin_path, "--mode", "rpc", "--provider", "demo", "--workspace", workspace,
             "--config", os.path.join(tmp, "config", "config.toml")],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, cwd=workspace)
        try:
            time.sleep(warmup)
            before = sizes(env["XDG_DATA_HOME"])
            started = time.monotonic()
            time.sleep(minutes * 60)
            after = sizes(env["XDG_DATA_HOME"])
            elapsed = (time.monotonic() - started) / 60
        finally:
            child.stdin.close()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        by_kind = collections.Counter()
        lines = collections.Counter()
        for path, size in after.items():
            grown = size - before.get(path, 0)
            by_kind[kind_of(path)] += grown
            if path.endswith(".jsonl") and grown > 0:
                lines.update(line_kinds(path, before.get(path, 0)))
        return by_kind, lines, elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="target/debug/claw-tui")
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--every", type=int, default=10, help="seconds between fires")
    parser.add_argument("--spread", action="store_true",
                        help="spread the jobs' anchors over the interval")
    parser.add_argument("--warmup", type=float, default=15, help="seconds before sampling")
    parser.add_argument("--minutes", type=float, default=3)
    args = parser.parse_args()
    by_kind, lines, elapsed = measure(
        os.path.abspath(args.bin), args.jobs, args.every, args.spread, args.warmup,
        args.minutes)
    total = sum(by_kind.values())
    how = "spread over the interval" if args.spread else "firing together"
    print(f"{args.jobs} jobs every {args.every} s ({how}), idle, {elapsed:.1f} min measured")
    for kind, grown in by_kind.most_common():
        print(f"  {kind:20} {grown / elapsed / 1024:10.1f} KiB/min")
    print(f"  {'total':20} {total / elapsed / 1024:10.1f} KiB/min")
    print("what was added, by line:")
    added = sum(lines.values()) or 1
    for kind, grown in lines.most_common(8):
        print(f"  {kind:40} {100 * grown / added:5.1f} %")
    per_job_day = total / elapsed * 1440 / args.jobs
    print(f"per job and day: {per_job_day / 1e6:.2f} MB "
          f"({args.jobs * 86400 // args.every // args.jobs} fires a day each)")


if __name__ == "__main__":
    main()
