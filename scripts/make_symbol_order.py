#!/usr/bin/env python3
"""Writes scripts/symbol-order.txt: the functions claw-tui runs in everyday use, for the
linker to place first and together (build.rs passes the file to the linker).

Why: the kernel maps a touched page of the program's code together with its neighbours
(fault-around, 64 KB), so code a session runs that is scattered over the whole text makes
most of the binary resident. Measured before this file existed: 12 MB of the 17 MB text
resident in an idle `--mode rpc` process, of which the functions it had run were 2 MB.

How: each workload below runs the shipped binary under valgrind's callgrind, which names
every function that executed (not a sample). The names found in the binary's symbol table
are written, those every workload ran first (the common start), then by how many ran
them. Run it again after a large change: a name that no longer exists is skipped by the
linker, a new function is only placed after the listed ones.

  cargo build --profile dist
  python3 scripts/make_symbol_order.py            # then build the dist profile again
  python3 scripts/make_symbol_order.py --check    # the share of the list the binary has

The names carry each crate's disambiguator, which changes when a crate's dependencies do:
after a dependency is added or bumped, write the list again (the measure scripts warn when
less than 80 % of it is in the binary they measure).
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resume_rig import ANSWER, FakeServer, PtyClient, order_coverage, throwaway_env, write_session  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "symbol-order.txt")
SESSION_NAME = "20240101T000000Z_" + "0" * 31 + "1.jsonl"
FN = re.compile(r"^c?fn=\(\d+\) (.+?)(?:'\d+)?$")


def sandbox():
    root = tempfile.mkdtemp(prefix="claw-order-")
    ws = os.path.join(root, "ws")
    os.makedirs(os.path.join(ws, "src"))
    with open(os.path.join(ws, "README.md"), "w") as f:
        f.write("# A project\n\nSome `code` and a list:\n\n- one\n- two\n")
    with open(os.path.join(ws, "src", "main.rs"), "w") as f:
        f.write("fn main() {\n    println!(\"hi\");\n}\n")
    env = throwaway_env(root)
    return root, ws, env


def grind(out_dir, name, argv):
    """The argv that runs `argv` under callgrind, writing `out_dir/name.out`."""
    return ["valgrind", "--tool=callgrind", "--demangle=no", "--trace-children=no",
            f"--callgrind-out-file={os.path.join(out_dir, name)}.%p.out", *argv]


def run_headless(bin_path, ws, env, out_dir):
    base = [bin_path, "--workspace", ws, "--yes"]
    jobs = {
        "print": [*base, "--provider", "demo", "-p", "list files"],
        "print-read": [*base, "--provider", "demo", "-p", "read README.md"],
        "json": [*base, "--provider", "demo", "--mode", "json", "-p", "run echo hi"],
        "resume-http": [*base, "-c", "-p", "hello"],
    }
    for name, argv in jobs.items():
        subprocess.run(grind(out_dir, name, argv), env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True, timeout=600)
    rpc = subprocess.Popen(grind(out_dir, "rpc", [*base, "--provider", "demo", "--mode", "rpc"]),
                           env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    rpc.stdin.write('{"type":"prompt","content":"list files"}\n')
    rpc.stdin.flush()
    for row in rpc.stdout:
        if '"agent_end"' in row:
            break
    rpc.stdin.close()
    rpc.wait(600)


def run_client(command, ws, env, provider):
    """The client in a pseudo-terminal: three prompts, the command popup, the panes."""
    argv = [*command, "--workspace", ws, *(["--provider", "demo"] if provider == "demo" else [])]
    if provider == "http":
        argv.append("-c")
    tui = PtyClient(argv, env)
    try:
        tui.wait_text("Enter", timeout=600)
        tui.wait_quiet(1.0, timeout=600)
        for prompt in (b"list files", b"read src/main.rs", b"hello"):
            mark = tui.mark()
            tui.send(prompt)
            tui.wait_quiet(0.5, timeout=600)
            tui.send(b"\r")
            if provider == "http":
                tui.wait_text(ANSWER, since=mark, timeout=600)
            # Under valgrind a frame can take a second: three quiet ones end the turn.
            tui.wait_quiet(3.0, timeout=600)
        # The help overlay, the transcript's detail toggle, each pane in turn.
        for keys in (b"/help", b"\r", b"\x1b", b"\x0f", b"\x0f", b"\t", b"\t", b"\t"):
            tui.send(keys)
            # An Esc read together with the next key would be Alt+key: let each be read.
            time.sleep(1.5)
            tui.wait_quiet(1.0, timeout=600)
        # Callgrind writes its profile when the program exits: quit, and give it time.
        tui.send(b"/quit")
        tui.wait_quiet(0.5, timeout=600)
        tui.send(b"\r")
        tui.proc.wait(600)
    finally:
        tui.close()


def names_in(path):
    found = set()
    with open(path, errors="replace") as f:
        for row in f:
            match = FN.match(row.rstrip("\n"))
            if match:
                found.add(match.group(1))
    return found


def symbols(bin_path):
    out = subprocess.run(["nm", "--defined-only", bin_path], capture_output=True, text=True,
                         check=True).stdout
    return {p[2] for p in (row.split() for row in out.splitlines()) if len(p) == 3 and p[1] in "tTwW"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="target/dist/claw-tui")
    parser.add_argument("--check", action="store_true",
                        help="only say how much of the list the binary defines")
    args = parser.parse_args()
    if args.check:
        print(f"{order_coverage(os.path.abspath(args.bin)):.0%} of {os.path.relpath(OUT)} "
              f"is in {args.bin}")
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind is needed (apt install valgrind)")
    bin_path = os.path.abspath(args.bin)
    known = symbols(bin_path)
    if not known:
        sys.exit(f"{bin_path} has no symbol table (is it stripped?)")
    root, ws, env = sandbox()
    out_dir = os.path.join(root, "callgrind")
    os.makedirs(out_dir)
    server = FakeServer()
    try:
        subprocess.run([bin_path, "--provider", "demo", "--workspace", ws, "-p", "hi"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        base = os.path.join(env["XDG_DATA_HOME"], "claw-tui", "sessions")
        (slug,) = os.listdir(base)
        write_session(os.path.join(base, slug, SESSION_NAME), ws, 200)
        config = os.path.join(env["XDG_CONFIG_HOME"], "claw-tui")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "config.toml"), "w") as f:
            f.write(server.config())
        started = time.perf_counter()
        run_headless(bin_path, ws, env, out_dir)
        for provider in ("demo", "http"):
            with open(os.path.join(config, "config.toml"), "w") as f:
                f.write(server.config() if provider == "http" else "")
            run_client(grind(out_dir, f"client-{provider}", [bin_path]), ws, env, provider)
        counts = collections.Counter()
        runs = [os.path.join(out_dir, n) for n in sorted(os.listdir(out_dir))]
        if len(runs) < 7:
            sys.exit(f"only {len(runs)} of 7 workloads left a profile in {out_dir}")
        for path in runs:
            counts.update(names_in(path) & known)
        order = sorted(counts, key=lambda n: (-counts[n], n))
        with open(OUT, "w") as f:
            f.write("".join(n + "\n" for n in order))
        print(f"{len(order)} functions from {len(runs)} runs in {time.perf_counter() - started:.0f} s "
              f"-> {os.path.relpath(OUT)}")
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
