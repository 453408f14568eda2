/**
 * Source comments cite what a reader can open: `docs/<file>.md` files that exist in the
 * repository, never a `spec/` folder that is not in it, never an issue number of a tracker that
 * is not in it either. The docs (`docs/*.md` and README.md) too: every relative link and every
 * `./` or `../` path they name resolves from the file that names it, every `docs/<file>.md` they
 * cite exists, and none cites a `spec/` folder (the specifications are `docs/*.md` files). What
 * the package ships (its docs, README and examples) cites only files the package holds.
 */
import { expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { bundlePath, pluginBundlePath, workerBundlePath } from "../../scripts/bundle.mjs"

const repo = fileURLToPath(new URL("../..", import.meta.url))

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") || path.endsWith(".mjs") ? [path] : []
  })

const sources = ["src", "bench", "test", "scripts", "examples"].flatMap((d) => filesUnder(join(repo, d)))
  .filter((file) => !file.endsWith("Citations.test.ts"))

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

// --- What the package ships cites only what it ships ---------------------------------------------
// The npm package holds what package.json's `files` lists: its docs and examples must not send a
// reader to a file it lacks (`src/...`, `test/...`, `bench/...`, CONTRIBUTING.md): they name a
// module or say "the source repository" instead. The three specifications, kept verbatim
// (docs/README.md lists them), cite another product's files and are left out of the check.

/** The files `npm pack` puts in the package (without building: `dist/` may not exist yet). */
const packed: ReadonlySet<string> = new Set(
  (JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", "--loglevel=error"], { cwd: repo, encoding: "utf8" })) as ReadonlyArray<{
    readonly files: ReadonlyArray<{ readonly path: string }>
  }>)[0]!.files.map((f) => f.path)
)

/** `dist/` is built when the package is packed: the compiled sources and the three bundles. */
const bundles = [bundlePath, pluginBundlePath, workerBundlePath].map((path) => relative(repo, path))
const isShipped = (path: string): boolean =>
  packed.has(path) ||
  [...packed].some((file) => file.startsWith(path.endsWith("/") ? path : `${path}/`)) ||
  (path.startsWith("dist/") &&
    (bundles.includes(path) || existsSync(join(repo, "src", path.slice("dist/".length).replace(/\.(d\.ts|js)$/, ".ts")))))

const verbatimSpecs = new Set(
  [...readFileSync(join(repo, "docs", "README.md"), "utf8").matchAll(/^\| ([\w.-]+\.md) \|/gm)].map((m) => `docs/${m[1]}`)
)

/** The shipped files a reader reads: README, the guides, the examples (code, scripts, manifests). */
const shippedTexts = [...packed].filter((file) =>
  /\.(md|ts|mjs|sh|json)$/.test(file) && (file === "README.md" || file.startsWith("docs/") || file.startsWith("examples/")) &&
  !verbatimSpecs.has(file)
)

/** The repository paths a text names: `src/...`, `test/...`, `docs/...` (a file, with its extension), and CONTRIBUTING.md. Fenced code blocks (samples of a user's own files) are left out. */
const citedPaths = (text: string): Array<string> => {
  const prose = text.replace(/^```[\s\S]*?^```/gm, "")
  return [
    ...[...prose.matchAll(/(?<![\w/.:~$@-])((?:src|test|bench|scripts|dist|bin|examples|schemas|docs)\/[\w./-]*\w\.\w+)/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/(?<![\w/.-])(CONTRIBUTING\.md)/g)].map((m) => m[1]!)
  ]
}

/**
 * The relative imports of a module and the relative link targets of a Markdown text, resolved from
 * its file. A TypeScript module's `./x.js` names its source `./x.ts` (TypeScript's rule for
 * NodeNext, which a user's project follows).
 */
const relativeCitations = (file: string, text: string): Array<string> => {
  const targets = file.endsWith(".md")
    ? relativeTargets(text)
    : [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gm)].map((m) => m[1]!)
  return targets.map((target) => {
    const path = join(dirname(file), decodeURI(target.split("#")[0] ?? ""))
    return file.endsWith(".ts") && path.endsWith(".js") && !isShipped(path) ? path.replace(/\.js$/, ".ts") : path
  })
}

it("every file path a shipped doc or example cites is in the package", () => {
  expect(shippedTexts).toEqual(expect.arrayContaining(["README.md", "docs/library.md", "examples/library.ts"]))
  const missing = shippedTexts.flatMap((file) => {
    const text = readFileSync(join(repo, file), "utf8")
    return [...citedPaths(text), ...relativeCitations(file, text)]
      .filter((path) => !isShipped(path))
      .map((path) => `${file}: ${path}`)
  })
  expect(missing).toEqual([])
})

it("the shipped examples import the package by its name, never the repository's sources", () => {
  const examples = shippedTexts.filter((file) => file.endsWith(".ts"))
  expect(examples.length).toBeGreaterThan(0)
  const bySource = examples.flatMap((file) =>
    [...readFileSync(join(repo, file), "utf8").matchAll(/from\s+"([^"]*\/src\/[^"]*)"/g)].map((m) => `${file}: ${m[1]}`)
  )
  expect(bySource).toEqual([])
})

it("the citation check sees paths the way a reader does", () => {
  expect(citedPaths("see `src/schema/Errors.ts`, test/x.test.ts and CONTRIBUTING.md; not node_modules/effect/src/Effect.ts, https://e.org/src/a.ts or ~/.city/docs/a.md\n```json\n{ \"entry\": \"dist/index.js\" }\n```\n"))
    .toEqual(["src/schema/Errors.ts", "test/x.test.ts", "CONTRIBUTING.md"])
  expect(isShipped("docs/library.md")).toBe(true)
  expect(isShipped("dist/index.js")).toBe(true)
  expect(isShipped("dist/city.cjs")).toBe(true)
  expect(isShipped("src/index.ts")).toBe(false)
  expect(isShipped("CONTRIBUTING.md")).toBe(false)
})
