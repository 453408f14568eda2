/**
 * The docs name no option the types lack, and leave none out: every option table in docs/ and the
 * README follows a marker `<!-- options: <Type> -->`, where `<Type>` is an exported interface or
 * type alias of src/ (one declaration of that name), and the keys in its first column (each in
 * backticks) are exactly the properties the compiler gives that type. A key the types lack (a
 * misspelling, a removed option) or an option the table leaves out fails here.
 */
import { expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const repo = path.join(import.meta.dirname, "../..")
const documents = [
  "README.md",
  ...readdirSync(path.join(repo, "docs")).filter((f) => f.endsWith(".md")).map((f) => path.join("docs", f))
]

interface OptionTable {
  readonly where: string
  readonly type: string
  readonly keys: ReadonlyArray<string>
}

/** Every marked table: the rows after the marker's table header, their first cells' backticked names. */
const tables: ReadonlyArray<OptionTable> = documents.flatMap((document) => {
  const lines = readFileSync(path.join(repo, document), "utf8").split("\n")
  return lines.flatMap((line, index) => {
    const marker = /^<!-- options: ([A-Za-z][A-Za-z0-9]*) -->$/.exec(line.trim())
    if (marker === null) return []
    let at = index + 1
    while (at < lines.length && lines[at]!.trim() === "") at++
    const rows: Array<string> = []
    while (at < lines.length && lines[at]!.trimStart().startsWith("|")) rows.push(lines[at++]!.trimStart())
    const keys = rows.slice(2).flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`([A-Za-z][A-Za-z0-9]*)`/g)].map((m) => m[1]!))
    return [{ where: `${document}:${index + 1}`, type: marker[1]!, keys }]
  })
})

/** The properties of each named type, as the compiler gives them (inherited ones included). */
const propertiesOf = (names: ReadonlyArray<string>): ReadonlyMap<string, ReadonlyArray<string> | string> => {
  const config = ts.readConfigFile(path.join(repo, "tsconfig.json"), ts.sys.readFile)
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, repo).options
  const sources = (readdirSync(path.join(repo, "src"), { recursive: true }) as Array<string>)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(repo, "src", f))
  const program = ts.createProgram({ rootNames: sources, options })
  const checker = program.getTypeChecker()
  const found = new Map<string, Array<ts.InterfaceDeclaration | ts.TypeAliasDeclaration>>()
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(path.join(repo, "src"))) continue
    for (const statement of file.statements) {
      if (!(ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))) continue
      const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true
      if (exported && names.includes(statement.name.text)) found.set(statement.name.text, [...(found.get(statement.name.text) ?? []), statement])
    }
  }
  return new Map(names.map((name): readonly [string, ReadonlyArray<string> | string] => {
    const declarations = found.get(name) ?? []
    if (declarations.length !== 1) return [name, `${declarations.length} exported declarations of ${name} in src/`]
    const type = checker.getTypeAtLocation(declarations[0]!.name)
    return [name, checker.getPropertiesOfType(type).map((p) => p.getName())]
  }))
}

it("there are option tables: the City's, the loader's, plugins.json's, the fleet's, runMain's", () => {
  expect(new Set(tables.map((t) => t.type))).toEqual(
    new Set([
      "CityLayerOptions",
      "RunMainOptions",
      "LoaderOptions",
      "Limits",
      "LoaderSettings",
      "RunnerOptions",
      "SweepSettings",
      "CapabilitiesConfig"
    ])
  )
  for (const table of tables) expect(table.keys.length, table.where).toBeGreaterThan(0)
})

it("each option table's keys are exactly its type's properties", () => {
  const properties = propertiesOf([...new Set(tables.map((t) => t.type))])
  const problems = tables.flatMap((table) => {
    const known = properties.get(table.type)!
    if (typeof known === "string") return [`${table.where}: ${known}`]
    return [
      ...table.keys.filter((k) => !known.includes(k)).map((k) => `${table.where}: \`${k}\` is not an option of ${table.type}`),
      ...known.filter((k) => !table.keys.includes(k)).map((k) => `${table.where}: ${table.type}'s \`${k}\` is missing from the table`)
    ]
  })
  expect(problems).toEqual([])
}, 120_000)
