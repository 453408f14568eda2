/**
 * Every export of every public module is documented the way Effect's own modules are: a JSDoc
 * block directly above it with a description, `@since <version>` and `@category <name>`
 * (conventions.md, "How Effect's own packages are written"). This is the API reference's check:
 * an undocumented export fails `npm test`.
 *
 * Which modules: every module reachable from the entry points `src/index.ts`, `src/plugin.ts`, `src/testing.ts` and `src/cluster.ts`
 * through their relative imports and re-exports. The walk test checks that this is every module
 * under `src/` except the programs (`src/programs/`, the demo and the CLI) and the modules only the
 * programs import (the CLI's settings file, for instance): a module reachable from nowhere fails it,
 * so the scope cannot silently shrink.
 *
 * What counts as an export: every top-level statement with an `export` modifier (const, let,
 * function, class, interface, type, enum, namespace) and `export default`. Class members and
 * interface fields are not checked.
 *
 * Re-exports (`export { a } from "./m.ts"`, `export * as M from "./m.ts"`) are exempt, in the entry
 * points, in `src/City.ts` and everywhere else: the names they re-export are checked where they are
 * declared (the walk follows every re-export), which is where editors read their documentation.
 * The entry points' namespace re-exports carry a JSDoc comment anyway, as Effect's index does.
 *
 * A failure names the file, the line and the export, and what its JSDoc lacks.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
const entryPoints = ["src/index.ts", "src/plugin.ts", "src/testing.ts", "src/cluster.ts"]

/** The part of the surface this test covers: all of `src/` but the programs. */
const inScope = (file: string): boolean => file.startsWith("src/") && !file.startsWith("src/programs/")

const parse = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true)

/** The relative modules a file imports or re-exports, as repository paths. */
const dependencies = (file: string, source: ts.SourceFile): Array<string> =>
  source.statements.flatMap((statement) => {
    const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))
      ? statement.moduleSpecifier
      : undefined
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) return []
    return [relative(root, resolve(root, dirname(file), specifier.text))]
  })

/** Every module reachable from the entry points, parsed. */
const reachable = (from: ReadonlyArray<string> = entryPoints): Map<string, ts.SourceFile> => {
  const seen = new Map<string, ts.SourceFile>()
  const queue = [...from]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    const source = parse(file)
    seen.set(file, source)
    queue.push(...dependencies(file, source))
  }
  return seen
}

const hasExportModifier = (statement: ts.Statement): boolean =>
  ts.canHaveModifiers(statement) &&
  (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** The names a top-level export statement declares. */
const exportedNames = (statement: ts.Statement): Array<string> => {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.map((d) => d.name.getText())
  }
  if (ts.isExportAssignment(statement)) return ["default"]
  const name = (statement as { readonly name?: ts.Node }).name
  return [name?.getText() ?? "default"]
}

/** The JSDoc block directly above a statement (only white space between), if any. */
const jsDocOf = (source: ts.SourceFile, statement: ts.Statement): string | undefined => {
  const text = source.getFullText()
  const comments = ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? []
  const last = comments.at(-1)
  if (last === undefined || last.kind !== ts.SyntaxKind.MultiLineCommentTrivia) return undefined
  const comment = text.slice(last.pos, last.end)
  if (!comment.startsWith("/**")) return undefined
  if (text.slice(last.end, statement.getStart(source)).trim() !== "") return undefined
  return comment
}

/** What a JSDoc block lacks: a description, `@since <version>`, `@category <name>`. */
const lacks = (doc: string | undefined): Array<string> => {
  if (doc === undefined) return ["a JSDoc block"]
  const lines = doc.replace(/^\/\*\*/, "").replace(/\*\/$/, "").split("\n").map((l) => l.replace(/^\s*\* ?/, ""))
  const firstTag = lines.findIndex((l) => l.trimStart().startsWith("@"))
  const description = (firstTag === -1 ? lines : lines.slice(0, firstTag)).join("\n").trim()
  const missing: Array<string> = []
  if (description === "") missing.push("a description")
  if (!/^\s*@since \d+\.\d+\.\d+\s*$/m.test(lines.join("\n"))) missing.push("@since")
  if (!/^\s*@category \S.*$/m.test(lines.join("\n"))) missing.push("@category")
  return missing
}

/** One line per undocumented export: `file:line: export name lacks ...`. */
const undocumented = (file: string, source: ts.SourceFile): Array<string> =>
  source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement)) return [] // re-exports: checked where declared
    if (!hasExportModifier(statement) && !ts.isExportAssignment(statement)) return []
    const missing = lacks(jsDocOf(source, statement))
    if (missing.length === 0) return []
    const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1
    return [`${file}:${line}: export ${exportedNames(statement).join(", ")} lacks ${missing.join(", ")}`]
  })

/** Every `.ts` file under a folder, as repository paths. */
const filesUnder = (folder: string): Array<string> =>
  readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(`${folder}/${entry.name}`)
      : entry.name.endsWith(".ts") ? [`${folder}/${entry.name}`] : []
  )

describe("JSDoc of every public module", () => {
  const modules = [...reachable()].filter(([file]) => inScope(file)).sort(([a], [b]) => (a < b ? -1 : 1))

  it("the walk from the entry points reaches every module under src/ but the programs' own", () => {
    const reached = new Set(modules.map(([file]) => file))
    const programs = filesUnder("src/programs")
    const fromPrograms = new Set(reachable(programs).keys())
    const unreached = filesUnder("src").filter((f) => inScope(f) && !reached.has(f))
    expect(unreached.filter((f) => !fromPrograms.has(f)), "modules reachable from nowhere").toEqual([])
    expect(reached).toContain("src/services/capabilities/Provisioner.ts")
    expect(reached).toContain("src/services/Observability.ts")
  })

  it("every export has a JSDoc block with a description, @since and @category", () => {
    const problems = modules.flatMap(([file, source]) => undocumented(file, source))
    expect(problems, `undocumented exports:\n${problems.join("\n")}`).toEqual([])
  })

  it("the check catches an export without @since, without @category, or without JSDoc", () => {
    const sample = ts.createSourceFile(
      "sample.ts",
      [
        "/**",
        " * Documented.",
        " * @since 0.1.0",
        " * @category models",
        " */",
        "export const ok = 1",
        "/**",
        " * No since.",
        " * @category models",
        " */",
        "export const noSince = 2",
        "/** @since 0.1.0 */",
        "export type NoCategory = string",
        "// a line comment is not JSDoc",
        "export class Bare {}",
        "export { ok as again } from \"./elsewhere.ts\""
      ].join("\n"),
      ts.ScriptTarget.Latest,
      true
    )
    expect(undocumented("sample.ts", sample)).toEqual([
      "sample.ts:11: export noSince lacks @since",
      "sample.ts:13: export NoCategory lacks a description, @category",
      "sample.ts:15: export Bare lacks a JSDoc block"
    ])
  })
})
