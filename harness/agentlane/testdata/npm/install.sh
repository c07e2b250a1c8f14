#!/bin/sh
# Installs the pinned agent CLIs the real-agents lane runs (Claude Code,
# Codex CLI, Gemini CLI, qwen-code) into node_modules here, from the npm
# registry, exactly as package-lock.json locks them. Needs npm; without it,
# says so and exits 0: the lane then skips with the same message. A stamp
# of the lockfile makes a second run a no-op, so CI can cache node_modules.
set -eu
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
	echo "agents: npm not found; the real-agents lane will skip" >&2
	exit 0
fi
stamp=node_modules/.granite-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
	exit 0
fi
# npm install with the lockfile, not npm ci: the lock holds what the
# registry it was made from serves, and one CLI's optional packages for
# other platforms (macOS, Windows clipboards) are not all there, which npm
# ci refuses as a lock out of sync while npm install installs the locked
# tree (--no-save: it leaves package-lock.json as it is).
npm install --no-save --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
