#!/usr/bin/env node
// The `city` binary. In a checkout (the TypeScript sources are here) it runs them through the
// tsx loader, so an edit needs no build; an installed package ships only `dist/` and runs that.
import { existsSync } from "node:fs"

const source = new URL("../src/programs/city.ts", import.meta.url)
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api")
  register()
  await import(source.href)
} else {
  await import(new URL("../dist/programs/city.js", import.meta.url).href)
}
