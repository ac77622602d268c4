#!/usr/bin/env bash
# Installs the real programs the interop suite drives (tests/it/interop; run it with
# `cargo test -- --ignored interop::`): the npm packages pinned in tests/interop-node
# (the official MCP reference servers, and acpx, the ACP client `claw-tui acp` is
# driven by) and Chromium. `.ci/run` runs this script too.
# Idempotent: what is already installed at the pinned versions is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

node_dir="${CLAW_TUI_INTEROP_NODE_DIR:-$HOME/.cache/claw-tui/interop-node}"

# Debian's packages, when this machine can install them (root with apt-get).
apt_install() {
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-interop: $* missing; install it with your package manager (Debian: apt-get install $*)" >&2
    exit 1
  fi
  echo "== apt-get install $*"
  # A fresh machine may have no package lists yet: fetch them and try once more.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" \
    || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"; }
}

command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm

# acpx asks for Node 22.13; what the suite runs of it works from Node 20 on.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "install-interop: node $(node --version) is too old for acpx (20 or newer)" >&2
  exit 1
fi

echo "== npm packages of tests/interop-node into $node_dir"
mkdir -p "$node_dir"
if cmp -s tests/interop-node/package-lock.json "$node_dir/package-lock.json" \
  && [ -d "$node_dir/node_modules" ]; then
  echo "already installed"
else
  cp tests/interop-node/package.json tests/interop-node/package-lock.json "$node_dir/"
  # Not `npm ci`: acpx's @openclaw/fs-safe names optional builds for other platforms
  # that the registry does not have, which `npm ci` refuses as missing from the lock.
  # `npm install` installs what the lock pins; a lock it had to change is a failure.
  rm -rf "$node_dir/node_modules"
  npm install --prefix "$node_dir" --no-audit --no-fund --prefer-offline --loglevel=error
  if ! cmp -s tests/interop-node/package-lock.json "$node_dir/package-lock.json"; then
    echo "install-interop: npm changed the lock file: tests/interop-node/package-lock.json is out of date" >&2
    exit 1
  fi
fi

command -v chromium >/dev/null || command -v chromium-browser >/dev/null \
  || [ -n "${CHROMIUM:-}" ] || apt_install chromium

echo "interop programs ready: cargo test -- --ignored interop::"
