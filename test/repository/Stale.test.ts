/**
 * The checkout's freshness check (`scripts/stale.cjs`, asked by `bin/city.mjs` on every start in a
 * checkout): the bundle is rebuilt whenever an input is newer, at any depth of `src/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isStale, outputs } from "../../scripts/stale.cjs"

/** A package root whose every file has the time `at` (seconds). */
const packageRoot = (at: number) => {
  const root = mkdtempSync(join(tmpdir(), "city-stale-"))
  const files = [
    "package.json",
    "scripts/bundle.mjs",
    "scripts/stale.cjs",
    "src/index.ts",
    "src/services/deep/Service.ts",
    ...outputs
  ]
  for (const file of files) {
    mkdirSync(join(root, file, ".."), { recursive: true })
    writeFileSync(join(root, file), "")
  }
  for (const path of [...files, "src/services/deep", "src/services", "src", "scripts", "dist"]) {
    utimesSync(join(root, path), at, at)
  }
  return root
}

describe("the checkout's freshness check", () => {
  it("is fresh when nothing is newer than the bundle", () => {
    const root = packageRoot(1_000_000)
    try {
      expect(isStale(root)).toBe(false)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it("is stale when a source file at any depth, package.json or a build script is newer, or an output is missing", () => {
    for (const change of ["src/services/deep/Service.ts", "src/index.ts", "package.json", "scripts/stale.cjs"]) {
      const root = packageRoot(1_000_000)
      try {
        utimesSync(join(root, change), 1_000_010, 1_000_010)
        expect(isStale(root), change).toBe(true)
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }
    const root = packageRoot(1_000_000)
    try {
      // A new file in a folder changes the folder's time.
      writeFileSync(join(root, "src/services/deep/New.ts"), "")
      expect(isStale(root)).toBe(true)
      rmSync(join(root, "src/services/deep/New.ts"))
      utimesSync(join(root, "src/services/deep"), 1_000_000, 1_000_000)
      expect(isStale(root)).toBe(false)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
    for (const output of outputs) {
      const fresh = packageRoot(1_000_000)
      try {
        rmSync(join(fresh, output))
        expect(isStale(fresh), output).toBe(true)
      } finally {
        rmSync(fresh, { recursive: true, force: true })
      }
    }
  })
})
