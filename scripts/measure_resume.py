#!/usr/bin/env python3
"""Release measurements of resuming a month-long session (issue 12, item 14).

What it does, per run:
  1. writes a session of 20,000 messages (~35 MB: questions, tool calls, tool results
     of a few KB, markdown answers with code) into a throw-away XDG data dir, in the
     format claw-tui writes;
  2. headless: runs `claw-tui -c -p hello --provider demo` on it and reports the wall
     time, the CPU time (user + system) and the peak RSS (ru_maxrss of the child, from
     wait4); on a loaded machine the CPU time is the steadier figure;
  3. client: launches `claw-tui -c --provider demo` in a detached tmux session at
     120x40, polls `tmux capture-pane` every 10 ms until the chat says "Resumed
     session", and reports that time and the peak RSS (VmHWM) at that moment.

Usage (not part of CI: it needs tmux and a release build):
  cargo build --release
  python3 scripts/measure_resume.py --bin target/release/claw-tui --runs 3
  python3 scripts/measure_resume.py --messages 20000 --no-client

The issue's targets are printed beside the figures; the exit code is 0 either way.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time

TARGET_MS = 300
TARGET_RSS_FACTOR = 3.0
SESSION = "claw-measure-resume"
WIDTH, HEIGHT = 120, 40

PROSE = (
    "The loop reads the queue before each call, so a steering message sent while a tool "
    "runs is picked up at the next boundary; the remaining calls are skipped and each "
    "still gets its start and end events. "
)
CODE = (
    "```rust\nfn fold(state: &mut State, event: &Event) {\n    match event {\n"
    "        Event::Delta(text) => state.text.push_str(text),\n"
    "        Event::End => state.done = true,\n    }\n}\n```\n"
)
LISTING = "".join(f"src/module_{i:03}/file_{i:03}.rs\t{1200 + i * 7} bytes\n" for i in range(60))


def line(kind, **fields):
    return json.dumps({"type": kind, **fields}, separators=(",", ":")) + "\n"


def write_session(path, workspace, messages):
    """Writes `messages` messages in groups of four: question, tool call, result, answer."""
    ts = 1_700_000_000_000
    with open(path, "w") as out:
        out.write(line("header", version=1, id="0" * 31 + "1", workspace=workspace,
                       provider="demo", model="demo (offline)", created=ts))
        for i in range(messages):
            ts += 1000
            kind = i % 4
            if kind == 0:
                message = {"role": "user", "content": f"Question {i}: " + PROSE, "timestamp": ts}
            elif kind == 1:
                message = {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"Let me look ({i})."},
                        {"type": "tool_call", "id": f"call-{i}", "name": "list_dir",
                         "args": {"path": f"src/module_{i % 100:03}"}},
                    ],
                    "stop_reason": "tool_use",
                    "usage": {"input": 1200, "output": 40, "cache_read": 0, "cache_write": 0, "cost": 0.0},
                    "model": "demo (offline)",
                    "timestamp": ts,
                }
            elif kind == 2:
                message = {
                    "role": "tool_result", "tool_call_id": f"call-{i - 1}", "tool_name": "list_dir",
                    "content": LISTING, "details": {"entries": 60, "truncated": False},
                    "is_error": False, "timestamp": ts,
                }
            else:
                message = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"## Answer {i}\n\n" + PROSE * 14 + CODE * 3}],
                    "stop_reason": "stop",
                    "usage": {"input": 4000, "output": 900, "cache_read": 0, "cache_write": 0, "cost": 0.0},
                    "model": "demo (offline)",
                    "timestamp": ts,
                }
            out.write(line("message", timestamp=ts, message=message))


def sandbox(messages):
    root = tempfile.mkdtemp(prefix="claw-resume-")
    ws = os.path.join(root, "ws")
    os.makedirs(ws)
    env = dict(os.environ)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAW_TUI_PROVIDER", "CLAW_TUI_MODEL"):
        env.pop(var, None)
    env.update({
        "HOME": root,
        "XDG_DATA_HOME": os.path.join(root, "data"),
        "XDG_CONFIG_HOME": os.path.join(root, "config"),
        "XDG_STATE_HOME": os.path.join(root, "state"),
        "CLAW_TUI_DEMO_PACE_MS": "0",
    })
    # The directory claw-tui derives from the workspace: ask the binary once.
    return root, ws, env


def session_dir(bin_path, ws, env):
    """Runs one tiny `-p` to learn the workspace's session directory, then empties it."""
    subprocess.run([bin_path, "--provider", "demo", "--workspace", ws, "-p", "hi"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    base = os.path.join(env["XDG_DATA_HOME"], "claw-tui", "sessions")
    (slug,) = os.listdir(base)
    directory = os.path.join(base, slug)
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    return directory


def headless(bin_path, ws, env):
    start = time.perf_counter()
    proc = subprocess.Popen([bin_path, "--provider", "demo", "--workspace", ws, "-c", "-p", "hello"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(proc.stderr.read().decode(errors="replace").strip())
    return elapsed, usage.ru_maxrss / 1024, code, (usage.ru_utime + usage.ru_stime) * 1000


def vm_hwm_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for row in f:
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    return float("nan")


def client(bin_path, ws, env):
    subprocess.run(["tmux", "kill-session", "-t", SESSION], stderr=subprocess.DEVNULL)
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.startswith(("XDG_", "HOME", "CLAW_")))
    cmd = f"env {env_args} {shlex.quote(bin_path)} --provider demo --workspace {shlex.quote(ws)} -c"
    start = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", str(WIDTH), "-y", str(HEIGHT), cmd],
                   check=True)
    pid = None
    try:
        while time.perf_counter() - start < 60:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", SESSION],
                                    capture_output=True, text=True).stdout
            if "Resumed session" in screen:
                elapsed = (time.perf_counter() - start) * 1000
                pane = subprocess.run(["tmux", "list-panes", "-t", SESSION, "-F", "#{pane_pid}"],
                                      capture_output=True, text=True).stdout.split()
                pid = int(pane[0])
                # The pane runs `env`, which execs claw-tui: same pid.
                return elapsed, vm_hwm_mb(pid)
            time.sleep(0.01)
        return float("nan"), float("nan")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], stderr=subprocess.DEVNULL)
        # The next run must find the session file unlocked: wait for the process to go.
        while pid is not None and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.01)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="target/release/claw-tui")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--no-client", action="store_true")
    args = parser.parse_args()
    bin_path = os.path.abspath(args.bin)
    root, ws, env = sandbox(args.messages)
    try:
        directory = session_dir(bin_path, ws, env)
        path = os.path.join(directory, "20240101T000000Z_" + "0" * 31 + "1.jsonl")
        write_session(path, ws, args.messages)
        size_mb = os.path.getsize(path) / 1e6
        print(f"session: {args.messages} messages, {size_mb:.1f} MB")
        with open(path, "rb") as f:
            pristine = f.read()
        for run in range(args.runs):
            # Each run resumes the same history: put the file back as it was.
            with open(path, "wb") as f:
                f.write(pristine)
            # Written long ago in real use: the resume must not pay for flushing it.
            os.sync()
            ms, rss, code, cpu = headless(bin_path, ws, env)
            print(f"run {run + 1}: -c -p  {ms:7.0f} ms (target < {TARGET_MS}), CPU {cpu:5.0f} ms  "
                  f"peak RSS {rss:6.1f} MB (target < {TARGET_RSS_FACTOR * size_mb:.0f})  exit {code}")
            if not args.no_client and shutil.which("tmux"):
                with open(path, "wb") as f:
                    f.write(pristine)
                os.sync()
                ms, rss = client(bin_path, ws, env)
                print(f"run {run + 1}: client ready {ms:7.0f} ms  peak RSS {rss:6.1f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
