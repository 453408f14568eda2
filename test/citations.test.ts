/**
 * Source comments cite what a reader can open: `docs/<file>.md` files that exist in the
 * repository, never a `spec/` folder that is not in it, never an issue number of a tracker that
 * is not in it either. The docs (`docs/*.md` and README.md) too: every relative link and every
 * `./` or `../` path they name resolves from the file that names it, every `docs/<file>.md` they
 * cite exists, and none cites a `spec/` folder (the specifications are `docs/*.md` files).
 */
import { expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
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

const docs = ["README.md", ...readdirSync(join(repo, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))]

/** What a Markdown text points at relative to its own folder: link targets (`[text](target)`) and code spans naming `./` or `../` paths. */
const relativeTargets = (text: string): Array<string> => [
  ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? ""),
  ...[...text.matchAll(/`(\.\.?\/[^`\s]+)`/g)].map((m) => m[1] ?? "")
].filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target))

it("every relative link and path in docs/*.md and README.md resolves to what exists", () => {
  const broken = docs.flatMap((doc) =>
    relativeTargets(readFileSync(join(repo, doc), "utf8"))
      .filter((target) => !existsSync(join(repo, dirname(doc), decodeURI(target.split("#")[0] ?? ""))))
      .map((target) => `${doc}: ${target}`)
  )
  expect(broken).toEqual([])
})

it("every docs/<file>.md the docs cite exists, and none cites a spec/ folder", () => {
  const found = docs.flatMap((doc) =>
    readFileSync(join(repo, doc), "utf8").split("\n").flatMap((line, i) => [
      ...[...line.matchAll(/\bdocs\/([A-Za-z0-9._-]+\.md)/g)]
        .filter((m) => !existsSync(join(repo, "docs", m[1] ?? "")))
        .map((m) => `${doc}:${i + 1}: docs/${m[1]}`),
      ...(/(^|[\s(`"'])spec\//.test(line) ? [`${doc}:${i + 1}: ${line.trim()}`] : [])
    ])
  )
  expect(found).toEqual([])
})

it("the link check sees a link, a code-span path and an anchor the way a reader does", () => {
  expect(relativeTargets("[a](docs/x.md) `../y.md` [b](https://e.org/z.md) [c](#here) `docs/w.md` [d](cli.md#json \"t\")"))
    .toEqual(["docs/x.md", "cli.md#json", "../y.md"])
})
