#!/usr/bin/env node
// The `city` binary: one bundled, tree-shaken module, `dist/city.mjs` (scripts/bundle.mjs).
// In a checkout (where `src/` is) the bundle is rebuilt first whenever a source file is newer,
// so an edit never runs stale code; an installed package ships the bundle and runs it as is.
import { existsSync } from "node:fs"

if (existsSync(new URL("../src/programs/city.ts", import.meta.url))) {
  const { ensureBundle } = await import("../scripts/bundle.mjs")
  await ensureBundle()
}
await import("../dist/city.mjs")
