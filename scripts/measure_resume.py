#!/usr/bin/env python3
"""Release measurements of resuming long sessions and of the turn after the resume.

For each size (by default 5k, 20k, 40k and 100k messages: ~9, 35, 71 and 177 MB) it
writes a session in the format claw-tui writes (questions, tool calls, tool results of a
few KB, markdown answers with code) into a throw-away XDG data dir, and measures it with
two providers: the offline demo model, and an OpenAI-compatible server on loopback that
reads each request's whole body (the demo model sends no body and would hide the cost of
building one). The server's context window is set so large that the whole history is
sent: the worst case.

  -c -p        `claw-tui -c -p hello`: wall time, CPU (user + system) and peak RSS
               (GNU time's %M: the program's own, not this script's);
  client       `claw-tui -c` in a pseudo-terminal of 120x40: the time until the chat
               says "Resumed session", and the peak RSS (VmHWM) then;
  key echo     the median time from writing one key to the first byte of the frame
               that shows it (10 keys, with the client idle), before the turn and
               after it;
  next request (HTTP) from writing Enter to the request's head reaching the server,
               and to its last body byte;
  turn         the CPU the client used from Enter until the answer was shown and the
               screen went quiet, and the peak RSS after it.

The targets are printed beside the figures: peak RSS at most 3x the session file, the
next request within 0.5 s of Enter, a key echo within 16 ms. The exit code is 0 either
way: this is a measurement, not a test.

Usage (not part of CI: it needs the shipped build):
  cargo build --profile dist
  python3 scripts/measure_resume.py                      # all four sizes, both providers
  python3 scripts/measure_resume.py --sizes 20000 --runs 3 --providers http
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resume_rig import (ANSWER, FakeServer, PtyClient, cpu_ms, throwaway_env, vm_hwm_mb,  # noqa: E402
                        warn_stale_order, write_session)

RSS_FACTOR = 3.0
NEXT_REQUEST_MS = 500
KEY_ECHO_MS = 16
SESSION_NAME = "20240101T000000Z_" + "0" * 31 + "1.jsonl"
TIME = "/usr/bin/time"


def sandbox():
    root = tempfile.mkdtemp(prefix="claw-resume-")
    ws = os.path.join(root, "ws")
    os.makedirs(ws)
    env = throwaway_env(root)
    return root, ws, env


def session_dir(bin_path, ws, env):
    """Runs one tiny `-p` to learn the workspace's session directory, then empties it."""
    subprocess.run([bin_path, "--provider", "demo", "--workspace", ws, "-p", "hi"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    base = os.path.join(env["XDG_DATA_HOME"], "claw-tui", "sessions")
    (slug,) = os.listdir(base)
    directory = os.path.join(base, slug)
    clear(directory)
    return directory


def clear(directory):
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def provider_args(provider):
    return ["--provider", "demo"] if provider == "demo" else []


def headless(bin_path, ws, env, provider, server):
    """`-c -p hello`, started by GNU time, which reports its child's own peak RSS: a
    child of this script would count the script's memory too (Linux keeps the larger of
    the parent's resident size at the fork and the program's in ru_maxrss across exec)."""
    argv = [bin_path, *provider_args(provider), "--workspace", ws, "-c", "-p", "hello"]
    if server:
        server.requests.clear()
    with tempfile.NamedTemporaryFile("r") as measured:
        start = time.perf_counter()
        proc = subprocess.Popen([TIME, "-f", "%e %U %S %M %x", "-o", measured.name, *argv], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = proc.communicate()
        elapsed = (time.perf_counter() - start) * 1000
        wall, user, system, rss_kb, code = measured.read().split()[-5:]
    code = int(code)
    if code != 0:
        print(err.decode(errors="replace").strip())
    sent = (server.requests[0]["head"] - start) * 1000 if server and server.requests else None
    # GNU time gives KiB; the files are measured in MB (10^6 bytes), and so is this.
    return {"wall": elapsed, "cpu": (float(user) + float(system)) * 1000,
            "rss": int(rss_kb) * 1024 / 1e6, "exit": code, "sent": sent}


def client(bin_path, ws, env, provider, server):
    argv = [bin_path, *provider_args(provider), "--workspace", ws, "-c"]
    tui = PtyClient(argv, env)
    try:
        ready = tui.wait_text("Resumed session")
        pid = tui.pid()
        out = {"ready": (ready - tui.started) * 1000, "ready_rss": vm_hwm_mb(pid)}
        echoes = [tui.key_echo_ms(b"x") for _ in range(10)]
        for _ in range(10):
            tui.send(b"\x7f")
        tui.wait_quiet()
        out["echo"] = statistics.median(echoes)
        tui.send(b"hello")
        tui.wait_quiet()
        if server:
            server.requests.clear()
            server.arrived.clear()
        before = cpu_ms(pid)
        mark = tui.mark()
        enter = time.perf_counter()
        tui.send(b"\r")
        if server:
            if not server.arrived.wait(120):
                raise TimeoutError("no request reached the server")
            request = server.requests[0]
            out["head"] = (request["head"] - enter) * 1000
            out["body"] = (request["body"] - enter) * 1000
            out["bytes"] = request["bytes"]
            tui.wait_text(ANSWER, since=mark)
        tui.wait_quiet(1.0)
        out["turn_cpu"] = cpu_ms(pid) - before
        out["turn_rss"] = vm_hwm_mb(pid)
        # And once more with the answer on screen and the history one turn longer.
        out["echo_after"] = statistics.median(tui.key_echo_ms(b"x") for _ in range(10))
        out["turn_rss"] = vm_hwm_mb(pid)
        return out
    finally:
        tui.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="target/dist/claw-tui")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--sizes", default="5000,20000,40000,100000",
                        help="messages per session, comma-separated")
    parser.add_argument("--providers", default="demo,http", help="demo, http or both")
    parser.add_argument("--no-client", action="store_true")
    args = parser.parse_args()
    if not os.access(TIME, os.X_OK):
        sys.exit(f"{TIME} (GNU time) is needed to measure a child's own peak RSS: apt install time")
    bin_path = os.path.abspath(args.bin)
    warn_stale_order(bin_path)
    root, ws, env = sandbox()
    server = FakeServer()
    rows = []
    try:
        directory = session_dir(bin_path, ws, env)
        path = os.path.join(directory, SESSION_NAME)
        for messages in (int(s) for s in args.sizes.split(",")):
            write_session(path, ws, messages)
            size = os.path.getsize(path) / 1e6
            with open(path, "rb") as f:
                pristine = f.read()
            for provider in args.providers.split(","):
                live = server if provider == "http" else None
                config = os.path.join(env["XDG_CONFIG_HOME"], "claw-tui")
                os.makedirs(config, exist_ok=True)
                with open(os.path.join(config, "config.toml"), "w") as f:
                    f.write(server.config() if live else "")
                for run in range(args.runs):
                    for mode in ("headless", "client"):
                        if mode == "client" and args.no_client:
                            continue
                        # Each run resumes the same history: the directory as it was.
                        clear(directory)
                        with open(path, "wb") as f:
                            f.write(pristine)
                        os.sync()
                        if mode == "headless":
                            h = headless(bin_path, ws, env, provider, live)
                        else:
                            c = client(bin_path, ws, env, provider, live)
                    rows.append((messages, size, provider, h, None if args.no_client else c))
                    report(rows[-1])
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)
    print()
    table(rows)


def report(row):
    messages, size, provider, h, c = row
    sent = f", request after {h['sent']:.0f} ms" if h["sent"] is not None else ""
    print(f"{messages} messages ({size:.0f} MB), {provider}: -c -p {h['wall']:.0f} ms, CPU {h['cpu']:.0f} ms, "
          f"peak RSS {h['rss']:.0f} MB{sent}, exit {h['exit']}", flush=True)
    if c:
        extra = (f", next request head {c['head']:.0f} ms / body {c['body']:.0f} ms "
                 f"({c['bytes'] / 1e6:.0f} MB)") if "head" in c else ""
        print(f"  client ready {c['ready']:.0f} ms / {c['ready_rss']:.0f} MB, key echo {c['echo']:.1f} ms "
              f"(after the turn {c['echo_after']:.1f} ms), "
              f"turn CPU {c['turn_cpu']:.0f} ms / peak RSS {c['turn_rss']:.0f} MB{extra}", flush=True)


def table(rows):
    print("| session | provider | `-c -p` wall / peak RSS | client ready / RSS | turn after resume: "
          "CPU / peak RSS | Enter → request head | key echo before / after | RSS ≤ 3× file |")
    print("|---|---|---|---|---|---|---|---|")
    for messages, size, provider, h, c in rows:
        limit = RSS_FACTOR * size
        if c:
            worst = max(h["rss"], c["ready_rss"], c["turn_rss"])
            head = f"{c['head']:.0f} ms" if "head" in c else "—"
            client_cells = (f"{c['ready'] / 1000:.2f} s / {c['ready_rss']:.0f} MB | "
                            f"{c['turn_cpu'] / 1000:.2f} s / {c['turn_rss']:.0f} MB | {head} | "
                            f"{c['echo']:.1f} / {c['echo_after']:.1f} ms")
        else:
            worst = h["rss"]
            client_cells = "— | — | — | —"
        verdict = "yes" if worst <= limit else f"no ({worst / size:.2f}×)"
        print(f"| {size:.0f} MB, {messages // 1000}k | {provider} | {h['wall'] / 1000:.2f} s / "
              f"{h['rss']:.0f} MB | {client_cells} | {verdict} |")
    print(f"\nTargets: peak RSS ≤ {RSS_FACTOR:.0f}× the file, Enter → request ≤ {NEXT_REQUEST_MS} ms, "
          f"key echo ≤ {KEY_ECHO_MS} ms.")


if __name__ == "__main__":
    main()
