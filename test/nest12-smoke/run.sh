#!/usr/bin/env bash
# Packs the library as it would be published, installs it beside NestJS 12, and runs smoke.ts.
# Needs `npm run build:lib` first; uses DATABASE_URL, or starts an embedded PostgreSQL.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
tarball="$(cd "$root/libs/durable" && npm pack --silent --pack-destination "$here")"
rm -rf node_modules/nestjs-durable && mkdir -p node_modules/nestjs-durable
tar -xzf "$tarball" -C node_modules/nestjs-durable --strip-components=1
rm -f "$tarball"
"$root/node_modules/.bin/tsc" -p tsconfig.json
node "$root/test/setup/with-database.mjs" node dist/smoke.js
