"""The parts scripts/measure_resume.py is made of: a session file in the format claw-tui
writes, a fake OpenAI-compatible server that reads each request's whole body, and the
client run in a pseudo-terminal of its own (so a key's echo is timed to the byte, without
a terminal multiplexer's polling in between)."""

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
ANSWER = "Measured answer, all done."


def throwaway_env(root):
    """This process's environment with HOME and the XDG dirs under `root`, no provider
    settings or keys of the user's, the demo model unpaced and the fake server's key."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for var in ("OPENAI_BASE_URL", "CLAW_TUI_PROVIDER", "CLAW_TUI_MODEL", "NO_COLOR"):
        env.pop(var, None)
    env.update({
        "HOME": root,
        "XDG_DATA_HOME": os.path.join(root, "data"),
        "XDG_CONFIG_HOME": os.path.join(root, "config"),
        "XDG_STATE_HOME": os.path.join(root, "state"),
        "CLAW_TUI_DEMO_PACE_MS": "0",
        "MEASURE_FAKE_KEY": "sk-measure",
    })
    return env


def line(kind, **fields):
    return json.dumps({"type": kind, **fields}, separators=(",", ":")) + "\n"


def write_session(path, workspace, messages):
    """Writes `messages` messages in groups of four: question, tool call, result, answer
    (tool results of a few KB, markdown answers with code: ~1.8 KB a message)."""
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


class FakeServer:
    """An OpenAI chat-completions endpoint on loopback. For each request it notes when the
    request's head arrived and when its whole body had been read (time.perf_counter, the
    clock the caller uses), then streams a short answer."""

    def __init__(self):
        self.requests = []
        self.arrived = threading.Event()
        rig = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                head = time.perf_counter()
                length = int(self.headers.get("Content-Length", "0"))
                remaining = length
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 20))
                    if not chunk:
                        break
                    remaining -= len(chunk)
                rig.requests.append({"head": head, "body": time.perf_counter(), "bytes": length})
                rig.arrived.set()
                chunks = [
                    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ANSWER},
                                  "finish_reason": None}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
                ]
                body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def config(self):
        """The config.toml that points claw-tui at this server, with a window large enough
        that the whole history is sent (the worst case)."""
        return (
            'provider = "fake"\n\n[providers.fake]\napi = "openai"\n'
            f'base_url = "http://127.0.0.1:{self.port}/v1"\nmodel = "fake-model"\n'
            'api_key_env = "MEASURE_FAKE_KEY"\ncontext_window = 2000000000\n'
        )

    def close(self):
        self.server.shutdown()


CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class PtyClient:
    """The client in a pseudo-terminal of `cols` x `rows`; a thread reads everything it
    writes, timestamped."""

    def __init__(self, argv, env, cols=120, rows=40):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = dict(env, TERM="xterm-256color")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0), close_fds=True)
        os.close(slave)
        self.master = master
        self.chunks = []  # (perf_counter, bytes)
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            now = time.perf_counter()
            self._answer(data)
            with self.cond:
                self.chunks.append((now, data))
                self.cond.notify_all()
            if not data:
                return

    def _answer(self, data):
        """Answers the client's questions as a terminal does: its background colour
        (OSC 11, black) and the device attributes (DA1) every terminal answers, so the
        start is timed as in one and not by the client's timeouts."""
        try:
            if b"\x1b]11;?" in data:
                os.write(self.master, b"\x1b]11;rgb:0000/0000/0000\x1b\\")
            if b"\x1b[c" in data:
                os.write(self.master, b"\x1b[?62;22c")
        except OSError:
            pass

    def text_since(self, index):
        """What was written from chunk `index` on, escape sequences removed."""
        with self.cond:
            data = b"".join(c for _, c in self.chunks[index:])
        return CSI.sub(b"", data).decode(errors="replace")

    def mark(self):
        with self.cond:
            return len(self.chunks)

    def wait_text(self, needle, since=0, timeout=120):
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            # Spaces are compared away: a frame skips the cells that stay blank, so a
            # shown "a b" can be written as "ab" with a cursor move between.
            if needle.replace(" ", "") in self.text_since(since).replace(" ", ""):
                with self.cond:
                    return self.chunks[-1][0]
            with self.cond:
                self.cond.wait(0.005)
        tail = self.text_since(since)[-1500:]
        raise TimeoutError(f"the client never showed {needle!r}; the last output: {tail!r}")

    def wait_quiet(self, quiet=0.3, timeout=60):
        """Waits until nothing visible was written for `quiet` seconds (an idle client
        still sends a frame with no change in it once a second)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self.cond:
                shown = [t for t, c in self.chunks if CSI.sub(b"", c)]
                last = shown[-1] if shown else self.started
            if time.perf_counter() - last >= quiet:
                return
            time.sleep(quiet / 10)
        raise TimeoutError("the client never went quiet")

    def send(self, data):
        os.write(self.master, data)

    def key_echo_ms(self, key=b"x"):
        """From writing one key to the first byte of the frame that shows it."""
        self.wait_quiet()
        index = self.mark()
        sent = time.perf_counter()
        self.send(key)
        with self.cond:
            while len(self.chunks) == index:
                self.cond.wait(5)
            return (self.chunks[index][0] - sent) * 1000

    def pid(self):
        return self.proc.pid

    def close(self):
        if self.proc.poll() is None:
            self.send(b"\x04")
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)


def vm_hwm_mb(pid):
    """The peak resident size in MB (10^6 bytes, the unit the session files are
    measured in: /proc gives KiB)."""
    with open(f"/proc/{pid}/status") as f:
        for row in f:
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) * 1024 / 1e6
    return float("nan")


def cpu_ms(pid):
    """User + system CPU time of `pid` so far, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


ORDER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "symbol-order.txt")


def order_coverage(bin_path):
    """The share of scripts/symbol-order.txt's names that `bin_path` defines. The names
    carry each crate's disambiguator, which changes with the crate's dependencies: after
    a dependency is added or bumped the list no longer matches, the functions a session
    runs are scattered again, and the resident code grows by megabytes."""
    out = subprocess.run(["nm", "--defined-only", bin_path], capture_output=True, text=True,
                         check=True).stdout
    defined = {p[2] for p in (row.split() for row in out.splitlines()) if len(p) == 3}
    with open(ORDER_FILE) as f:
        listed = [line.strip() for line in f if line.strip()]
    return sum(name in defined for name in listed) / max(len(listed), 1)


def warn_stale_order(bin_path):
    """Says on stderr when the binary was linked with a stale function order: memory
    figures measured with it read high."""
    try:
        share = order_coverage(bin_path)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"note: cannot check the function order of {bin_path}: {e}", file=sys.stderr)
        return
    if share < 0.8:
        print(f"warning: only {share:.0%} of scripts/symbol-order.txt is in {bin_path}: the order "
              "is stale (run scripts/make_symbol_order.py, then build the dist profile again); "
              "resident memory reads megabytes high", file=sys.stderr)
