/**
 * Source comments cite what a reader can open: `docs/<file>.md` files that exist in the
 * repository, never a `spec/` folder that is not in it, never an issue number of a tracker that
 * is not in it either.
 */
import { expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("..", import.meta.url))

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") || path.endsWith(".mjs") ? [path] : []
  })

const sources = ["src", "bench", "test", "scripts", "examples"].flatMap((d) => filesUnder(join(repo, d)))
  .filter((file) => !file.endsWith("citations.test.ts"))

it("every docs/<file>.md a source file cites exists", () => {
  const missing = sources.flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/\bdocs\/([A-Za-z0-9._-]+\.md)/g)]
      .map((m) => m[1] ?? "")
      .filter((doc) => !existsSync(join(repo, "docs", doc)))
      .map((doc) => `${relative(repo, file)}: docs/${doc}`)
  )
  expect(missing).toEqual([])
})

it("no source file cites a spec/ folder or an issue number", () => {
  const found = filesUnder(join(repo, "src")).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").flatMap((line, i) =>
      /(^|[\s(`"])spec\/[a-z-]+\.md|\b[Ii]ssue \d+|\bissue "/.test(line) ? [`${relative(repo, file)}:${i + 1}: ${line.trim()}`] : []
    )
  )
  expect(found).toEqual([])
})
