#!/usr/bin/env python3
"""Release measurements of the terminal client (issue 6, "Performance").

What it does, per run:
  1. starts a local fake OpenAI-compatible server (in this process) that answers any
     POST .../chat/completions with a 20,000-token markdown reply (prose, lists and
     fenced code in a dozen languages) as SSE, 20 tokens per chunk, one chunk every 2 ms;
  2. launches the release binary in a detached tmux session at 120x40 with a throw-away
     HOME / XDG dirs and a config.toml pointing provider `openai` at that server;
  3. startup: from releasing the binary's exec to the ready screen (welcome text and
     `idle` in the status line), polling `tmux capture-pane` every 20 ms;
  4. idle CPU over 5 s on the ready screen (nothing polled meanwhile);
  5. types a prompt, presses Enter, polls every 20 ms until the reply's last token is on
     screen, and reports the lag after the server wrote its last byte, the CPU of the
     process tree (utime+stime of the binary, its threads and descendants, from /proc)
     from Enter to that moment, and `wchar` (/proc/PID/io) over the same span;
  6. peak RSS (VmHWM), total wchar, and idle CPU over 5 s after the reply;
  7. key echo, in a pseudo-terminal of its own (so it is timed to the byte, not to
     tmux's polling): from writing a key to the first output holding it, with the client
     idle and while the 20,000-token answer streams; the median of 10 keys each.

Usage (not part of CI: it needs tmux and the shipped build, and takes ~15 s a run):
  CARGO_TARGET_DIR=/tmp/rel cargo build --profile dist
  python3 scripts/measure_tui.py --bin /tmp/rel/dist/claw-tui --runs 3
  python3 scripts/measure_tui.py --env NO_COLOR=1     # extra environment for the binary
  python3 scripts/measure_tui.py --config '[session]\nrecord_events = false'   # config text
  python3 scripts/measure_tui.py --json               # one JSON object per run
  python3 scripts/measure_tui.py --mcp-servers 3 --mcp-command target/debug/examples/mcp_fixture
                                  # startup with three configured stdio MCP servers

The issue's targets are printed beside the figures; the exit code is 0 either way.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WIDTH, HEIGHT = 120, 40
POLL = 0.020
TOKENS = 20_000
CHUNK_TOKENS = 20
CHUNK_INTERVAL = 0.002
IDLE_SECONDS = 5.0
MARKER = "ENDOFREPLY42"
SESSION = "claw-measure"
# A tmux server of this run's own: kill-server never ends another run's.
SOCKET = f"claw-measure-{os.getpid()}"
CLK_TCK = os.sysconf("SC_CLK_TCK")

TARGETS = {
    "startup_ms": 50,
    "lag_ms": 50,
    "cpu_s": 0.4,
    "peak_rss_mb": 30,
    "wchar_mb": 0.5,
    "idle_cpu_s": 0.01,
    "key_echo_idle_ms": 16,
    "key_echo_streaming_ms": 16,
}
# Characters typed for the echo: none of them is in the streamed answer, so the first
# output holding one is the composer showing it.
ECHO_KEYS = "¤§¶µ¿¡×÷þð"

CODE = {
    "rust": """use std::collections::HashMap;

/// Counts words, longest first.
pub fn count(text: &str) -> Vec<(String, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for word in text.split_whitespace() {
        *seen.entry(word).or_default() += 1;
    }
    let mut out: Vec<_> = seen.into_iter().map(|(w, n)| (w.to_owned(), n)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}""",
    "python": """import json
from pathlib import Path

def load(path: Path) -> dict:
    \"\"\"Reads a JSON file, or an empty dict when it is missing.\"\"\"
    if not path.exists():
        return {}
    with path.open() as f:
        return json.load(f)  # may raise on bad input

for key, value in sorted(load(Path("x.json")).items()):
    print(f"{key}: {value!r}")""",
    "typescript": """interface Job { id: string; every: number; last?: Date }

export async function due(jobs: Job[], now = new Date()): Promise<Job[]> {
  return jobs.filter((j) => !j.last || now.getTime() - j.last.getTime() >= j.every * 1000);
}

const names = (await due([])).map((j) => `job ${j.id}`);""",
    "javascript": """const http = require('http');
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end(`hello ${req.url}\\n`);
}).listen(8080, () => console.log('listening'));""",
    "go": """package main

import (
\t"fmt"
\t"os"
)

func main() {
\tfor i, arg := range os.Args[1:] {
\t\tfmt.Printf("%d: %s\\n", i, arg)
\t}
}""",
    "c": """#include <stdio.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        printf("%d: %s\\n", i, argv[i]); /* one per line */
    }
    return 0;
}""",
    "cpp": """#include <vector>
#include <algorithm>

template <typename T> T largest(const std::vector<T>& xs) {
    return *std::max_element(xs.begin(), xs.end());
}""",
    "bash": """#!/usr/bin/env bash
set -euo pipefail
for f in "$@"; do
  if [[ -f "$f" ]]; then
    echo "$(wc -l < "$f") $f"
  fi
done | sort -n""",
    "json": """{
  "name": "claw-tui",
  "version": "0.1.0",
  "features": ["tui", "cron", "subagents"],
  "limits": { "turns": 50, "tokens": null }
}""",
    "toml": """[package]
name = "demo"
version = "0.1.0"

[dependencies]
serde = { version = "1", features = ["derive"] }""",
    "yaml": """jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: cargo test --all  # every target""",
    "diff": """--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,4 +1,5 @@
 pub mod agent;
+pub mod cron;
 pub mod tools;
-pub mod old;""",
}

PROSE = (
    "The scheduler keeps **one timer** for all jobs and wakes only when the earliest is "
    "due, so an idle process uses no CPU at all. Each job records its `last_run` and the "
    "next fire time is computed in the job's *own* time zone, which matters around DST "
    "changes. See [the docs](https://example.com/docs) for the details and caveats."
)


def reply_tokens():
    """The reply as TOKENS word-sized tokens ending in MARKER, with balanced fences."""
    sections = []
    langs = list(CODE)
    i = 0
    while True:
        lang = langs[i % len(langs)]
        section = (
            f"## Part {i + 1}: {lang}\n\n{PROSE}\n\n"
            f"- first, read the `{lang}` example below\n- then run it\n\n"
            f"```{lang}\n{CODE[lang]}\n```\n\n"
        )
        count = len(split_tokens("".join(sections) + section))
        if count > TOKENS - 200:
            break
        sections.append(section)
        i += 1
    tokens = split_tokens("".join(sections))
    filler = split_tokens((PROSE + " ") * 20)
    pad = TOKENS - 1 - len(tokens)
    tokens += filler[:pad]
    tokens.append(" " + MARKER)
    assert len(tokens) == TOKENS
    return tokens


def split_tokens(text):
    # Each token is a word with the whitespace before it, so joining them gives the text.
    return re.findall(r"\s*\S+|\s+", text)


class FakeServer:
    """An OpenAI-compatible streaming endpoint; records when it wrote its last byte."""

    def __init__(self, tokens):
        self.tokens = tokens
        self.finished_at = None
        self.started_at = None
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                outer.stream(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stream(self, handler):
        def send(obj):
            data = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()

        def chunk(delta, finish=None):
            return {
                "id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 1,
                "model": "measure",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        self.started_at = time.monotonic()
        send(chunk({"role": "assistant", "content": ""}))
        start = time.monotonic()
        for n, i in enumerate(range(0, len(self.tokens), CHUNK_TOKENS)):
            # An absolute schedule so sleep overshoot does not add up over 1,000 chunks.
            delay = start + n * CHUNK_INTERVAL - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            send(chunk({"content": "".join(self.tokens[i:i + CHUNK_TOKENS])}))
        send(chunk({}, "stop"))
        send({
            "id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 1,
            "model": "measure", "choices": [],
            "usage": {"prompt_tokens": 100, "completion_tokens": len(self.tokens),
                      "total_tokens": 100 + len(self.tokens)},
        })
        send(b"[DONE]")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
        self.finished_at = time.monotonic()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def tmux(*args, check=True):
    out = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def screen():
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_screen(pred, what, timeout):
    """Polls on a fixed 20 ms grid (a capture takes ~5 ms, so sleeping 20 ms after each
    would poll every 25). Returns when the capture that saw `pred` came back: the figures
    include the capture's own latency, so they err on the slow side."""
    start = time.monotonic()
    n = 0
    while True:
        text = screen()
        if pred(text):
            return time.monotonic(), text
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"timed out waiting for {what}; screen:\n{text}")
        n += 1
        time.sleep(max(0.0, start + n * POLL - time.monotonic()))


def proc_stat(pid):
    """(ppid, utime+stime, cutime+cstime) in ticks, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is state (field 3); utime is field 14.
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def tree_cpu(root):
    """CPU seconds of root (all threads, reaped children included) and its live descendants."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st:
                stats[int(entry)] = st
    children = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            _, own, reaped = stats[pid]
            total += own + reaped
        todo.extend(children.get(pid, []))
    return total / CLK_TCK


def threads_cpu(pid):
    """Run time in seconds of the process's live threads, from schedstat: exact nanoseconds
    rather than tick samples, so two builds can be compared on a loaded machine."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/{pid}/status")


def wchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError(f"no wchar in /proc/{pid}/io")


def idle(text):
    return " idle " in text.rstrip("\n").split("\n")[-1]


def ready(text):
    return "Welcome to claw-tui" in text and idle(text)


def mcp_tables(count, command):
    """`[mcp.servers.NAME]` tables for `count` stdio servers running `command`."""
    return "".join(
        f'\n[mcp.servers.measure{n}]\ncommand = {json.dumps(command)}\n' for n in range(count)
    )


def one_run(binary, extra_env, tokens, mcp=""):
    server = FakeServer(tokens)
    tmp = tempfile.mkdtemp(prefix="claw-measure-")
    try:
        dirs = {k: os.path.join(tmp, k) for k in ("home", "config", "data", "state", "cache", "ws")}
        for d in dirs.values():
            os.makedirs(d)
        write_config(dirs, server, mcp)
        env = {
            "HOME": dirs["home"], "XDG_CONFIG_HOME": dirs["config"],
            "XDG_DATA_HOME": dirs["data"], "XDG_STATE_HOME": dirs["state"],
            "XDG_CACHE_HOME": dirs["cache"], "MEASURE_KEY": "sk-measure",
            "TERM": "tmux-256color", **extra_env,
        }
        # The pane waits on a line of input, then execs the binary: startup is timed from
        # that Enter, so tmux's own start-up is not counted, and the pane's pid is the binary's.
        launcher = os.path.join(tmp, "launch.sh")
        with open(launcher, "w") as f:
            f.write("#!/bin/sh\n")
            for k, v in env.items():
                f.write(f"export {k}={shlex.quote(v)}\n")
            f.write(f"cd {shlex.quote(dirs['ws'])}\necho gate-open; read _\n")
            f.write(f"exec {shlex.quote(binary)} --workspace {shlex.quote(dirs['ws'])}\n")
        os.chmod(launcher, 0o755)
        tmux("kill-server", check=False)
        tmux("-f", "/dev/null", "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT),
             "-s", SESSION, launcher)
        wait_screen(lambda t: "gate-open" in t, "the launcher", 5)
        pid = int(tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())
        # send-keys returns once tmux has written the key to the pane: the exec starts now.
        tmux("send-keys", "-t", SESSION, "Enter")
        t0 = time.monotonic()
        t_ready, _ = wait_screen(ready, "the ready screen", 10)
        startup_ms = (t_ready - t0) * 1000
        rss_ready = status_kb(pid, "VmHWM")

        time.sleep(0.5)
        cpu = tree_cpu(pid)
        time.sleep(IDLE_SECONDS)
        idle_before = tree_cpu(pid) - cpu

        tmux("send-keys", "-t", SESSION, "-l", "write the long answer")
        wait_screen(lambda t: "write the long answer" in t, "the typed prompt", 5)
        cpu0, w0, exact0 = tree_cpu(pid), wchar(pid), threads_cpu(pid)
        tmux("send-keys", "-t", SESSION, "Enter")
        t_last, _ = wait_screen(lambda t: MARKER in t, "the last token", 60)
        cpu_reply = tree_cpu(pid) - cpu0
        cpu_exact = threads_cpu(pid) - exact0
        w_reply = wchar(pid) - w0
        if server.finished_at is None:
            raise RuntimeError("the marker showed before the server finished")
        lag_ms = (t_last - server.finished_at) * 1000
        stream_s = server.finished_at - server.started_at

        wait_screen(idle, "idle after the reply", 10)
        time.sleep(1.0)
        cpu = tree_cpu(pid)
        time.sleep(IDLE_SECONDS)
        idle_after = tree_cpu(pid) - cpu

        result = {
            "startup_ms": round(startup_ms, 1),
            "lag_ms": round(lag_ms, 1),
            "cpu_s": round(cpu_reply, 3),
            "cpu_exact_s": round(cpu_exact, 4),
            "peak_rss_mb": round(status_kb(pid, "VmHWM") / 1024, 1),
            "rss_ready_mb": round(rss_ready / 1024, 1),
            "rss_end_mb": round(status_kb(pid, "VmRSS") / 1024, 1),
            # Of which mapped files (mostly the binary's own code pages) rather than heap.
            "rss_file_end_mb": round(status_kb(pid, "RssFile") / 1024, 1),
            "wchar_mb": round(w_reply / 1e6, 3),
            "wchar_total_mb": round(wchar(pid) / 1e6, 3),
            "idle_cpu_s": round(idle_before, 3),
            "idle_after_reply_cpu_s": round(idle_after, 3),
            "stream_s": round(stream_s, 2),
            "requests": server.requests,
        }
        tmux("send-keys", "-t", SESSION, "C-d")
        return result
    finally:
        tmux("kill-server", check=False)
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)


def write_config(dirs, server, mcp):
    """The config file of a run: provider `openai` on the fake server."""
    os.makedirs(os.path.join(dirs["config"], "claw-tui"), exist_ok=True)
    config = os.path.join(dirs["config"], "claw-tui", "config.toml")
    with open(config, "w") as f:
        f.write(
            'provider = "openai"\n\n[providers.openai]\n'
            f'base_url = "{server.url}"\nmodel = "measure"\napi_key_env = "MEASURE_KEY"\n'
            + mcp
        )


def echo_run(binary, extra_env, tokens):
    """Key echo, idle and while the answer streams (medians of 10 keys), in a
    pseudo-terminal of its own: each time runs from writing the key to the first output
    holding it."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from resume_rig import PtyClient  # noqa: E402
    server = FakeServer(tokens)
    tmp = tempfile.mkdtemp(prefix="claw-echo-")
    client = None
    try:
        dirs = {k: os.path.join(tmp, k) for k in ("home", "config", "data", "state", "cache", "ws")}
        for d in dirs.values():
            os.makedirs(d)
        write_config(dirs, server, "")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": dirs["home"],
            "XDG_CONFIG_HOME": dirs["config"], "XDG_DATA_HOME": dirs["data"],
            "XDG_STATE_HOME": dirs["state"], "XDG_CACHE_HOME": dirs["cache"],
            "MEASURE_KEY": "sk-measure", "COLORFGBG": "15;0", **extra_env,
        }
        client = PtyClient([binary, "--workspace", dirs["ws"]], env, WIDTH, HEIGHT)
        client.wait_text("idle")
        client.wait_quiet()

        def echo(key):
            index = client.mark()
            sent = time.perf_counter()
            client.send(key.encode())
            shown = client.wait_text(key, since=index, timeout=10)
            return (shown - sent) * 1000

        idle = []
        for key in ECHO_KEYS:
            client.wait_quiet(quiet=0.2)
            idle.append(echo(key))
        # Clear the composer (Ctrl+C), then stream and type while it streams.
        client.send(b"\x03")
        client.wait_quiet(quiet=0.2)
        client.send(b"write the long answer\r")
        while server.started_at is None:
            time.sleep(0.005)
        streaming = []
        for key in ECHO_KEYS:
            if server.finished_at is not None:
                break
            streaming.append(echo(key))
            time.sleep(0.05)
        # Let the answer finish: a client that quits mid-stream cuts the server off.
        deadline = time.perf_counter() + 30
        while server.finished_at is None and time.perf_counter() < deadline:
            time.sleep(0.01)
        return {
            "key_echo_idle_ms": round(statistics.median(idle), 1),
            "key_echo_streaming_ms": round(statistics.median(streaming), 1)
            if streaming else None,
        }
    finally:
        if client is not None:
            client.send(b"\x03\x03")
            client.close()
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global TOKENS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="/tmp/rel/dist/claw-tui", help="the shipped (dist) binary")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--env", action="append", default=[], metavar="K=V",
                        help="extra environment for the binary (repeatable)")
    parser.add_argument("--json", action="store_true", help="print each run as JSON")
    parser.add_argument("--tokens", type=int, default=20_000,
                        help="tokens in the streamed answer (default 20,000)")
    parser.add_argument("--mcp-servers", type=int, default=0, metavar="N",
                        help="configure N stdio MCP servers (they connect after the first frame)")
    parser.add_argument("--mcp-command", default="target/release/examples/mcp_fixture",
                        help="the MCP server program for --mcp-servers")
    parser.add_argument("--config", default="", metavar="TOML",
                        help="more config file text, e.g. '[session]\\nrecord_events = false'")
    args = parser.parse_args()
    TOKENS = args.tokens
    mcp = "\n" + args.config.replace("\\n", "\n") + "\n" if args.config else ""
    if args.mcp_servers:
        if not os.access(args.mcp_command, os.X_OK):
            sys.exit(f"measure_tui: {args.mcp_command} is not an executable: build it with "
                     "`cargo build --release --example mcp_fixture` or pass --mcp-command")
        mcp += mcp_tables(args.mcp_servers, os.path.abspath(args.mcp_command))
    if not shutil.which("tmux"):
        sys.exit("measure_tui: tmux is not installed (apt-get install tmux)")
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"measure_tui: {args.bin} is not an executable: build it with "
                 "`CARGO_TARGET_DIR=/tmp/rel cargo build --profile dist` or pass --bin")
    extra = dict(kv.split("=", 1) for kv in args.env)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from resume_rig import warn_stale_order  # noqa: E402
    warn_stale_order(os.path.abspath(args.bin))
    load = os.getloadavg()[0]
    if load > 0.5:
        # Timings (startup, lag, CPU) on a busy 2-core machine come out worse; RSS and
        # wchar do not care.
        print(f"note: load average {load:.2f}: timings are pessimistic", file=sys.stderr)
    tokens = reply_tokens()
    runs = []
    for n in range(args.runs):
        result = one_run(os.path.abspath(args.bin), extra, tokens, mcp)
        result.update(echo_run(os.path.abspath(args.bin), extra, tokens))
        runs.append(result)
        print(json.dumps(result) if args.json else f"run {n + 1}: {result}", flush=True)
    print(f"\n{'figure':<24}{'min':>10}{'max':>10}{'target':>10}")
    for key in runs[0]:
        values = [r[key] for r in runs]
        target = TARGETS.get(key, "")
        print(f"{key:<24}{min(values):>10}{max(values):>10}{target!s:>10}")


if __name__ == "__main__":
    main()
