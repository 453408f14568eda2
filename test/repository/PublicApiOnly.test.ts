/**
 * Only Effect's public, documented API: no source file mirrors Effect's internal shapes or builds
 * runtimes by hand, and every `unsafe*` call of Effect's says, in a comment starting `unsafe:` just
 * above it (a line comment, or a line of the doc comment of the export it is in), why the safe form
 * cannot serve. The `unsafe*` helpers of Observability.ts say why in their doc comments.
 */
import { expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") ? [path] : []
  })
const sources = filesUnder(join(repo, "src")).map((file) => ({
  file: relative(repo, file),
  lines: readFileSync(file, "utf8").split("\n")
}))
const code = (line: string) => !/^\s*(\*|\/\/|\/\*\*)/.test(line)

it("no source relies on Effect's internals: scope state, hand-built runtimes, fiber observers", () => {
  const reliance = /state\.finalizers|ScopeImpl|Runtime\.make\(|FiberRefs\.|\.addObserver\(|\.unsafePoll\(|effect\/[\w/]*internal/
  const found = sources.flatMap(({ file, lines }) =>
    lines.flatMap((line, i) => (code(line) && reliance.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []))
  )
  expect(found).toEqual([])
})

it("every call of an unsafe* API says why the safe form cannot serve", () => {
  const unsafe = /\bunsafe[A-Z]\w*\(/
  const found = sources.flatMap(({ file, lines }) =>
    lines.flatMap((line, i) => {
      if (!code(line) || !unsafe.test(line) || /export const unsafe\w* =/.test(line)) return []
      const above = lines.slice(Math.max(0, i - 3), i).join("\n")
      return /(\/\/|\*) unsafe: /.test(above) || /\/\/ unsafe: /.test(line) ? [] : [`${file}:${i + 1}: ${line.trim()}`]
    })
  )
  expect(found).toEqual([])
})
