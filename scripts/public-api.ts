/**
 * The public API as a list: every name the package's entry points export (`effect-city`,
 * `effect-city/plugin`, `effect-city/testing`, `effect-city/cluster`), one line each, namespaces with their members, each
 * with its kind. `npm run api` writes it to `docs/public-api.txt`; test/repository/PublicApi.test.ts fails
 * when the committed file differs from what the entry points export now, so a change of the public
 * surface is always a deliberate, reviewed edit of that file.
 *
 * `declarations` gives, for each name of that list, the files that declare it, every re-export
 * followed to its end (`export { x } from`, `export * as N from`, `export *`, through any number of
 * modules): test/repository/PublicApi.test.ts holds that none is under an `internal/` folder (docs/design.md,
 * "Layout": public modules declare, internal modules implement).
 */
import { writeFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const repo = fileURLToPath(new URL("..", import.meta.url))

/** The entry points, as the package's `exports` name them. */
export const entryPoints: ReadonlyArray<{ readonly specifier: string; readonly file: string }> = [
  { specifier: "effect-city", file: "src/index.ts" },
  { specifier: "effect-city/plugin", file: "src/plugin.ts" },
  { specifier: "effect-city/testing", file: "src/testing.ts" },
  { specifier: "effect-city/cluster", file: "src/cluster.ts" }
]

const kindOf = (checker: ts.TypeChecker, symbol: ts.Symbol): string => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const f = target.flags
  if (f & ts.SymbolFlags.ValueModule || f & ts.SymbolFlags.NamespaceModule) return "namespace"
  if (f & ts.SymbolFlags.Class) return "class"
  if (f & ts.SymbolFlags.Function) return "function"
  if (f & ts.SymbolFlags.Interface) return f & ts.SymbolFlags.Value ? "interface+value" : "interface"
  if (f & ts.SymbolFlags.TypeAlias) return f & ts.SymbolFlags.Value ? "type+value" : "type"
  if (f & ts.SymbolFlags.Enum) return "enum"
  if (f & ts.SymbolFlags.Variable) return "const"
  return "other"
}

/** An entry point: the specifier a user imports, and its file from the root. */
export interface EntryPoint {
  readonly specifier: string
  readonly file: string
}

/** One public name: its line's specifier and name (`City.layer`), its symbol, and its kind. */
interface Named {
  readonly specifier: string
  readonly name: string
  readonly symbol: ts.Symbol
  readonly kind: string
}

/** Every public name of `entries` (each entry's exports, and each namespace's members), in the list's order. */
const publicNames = (entries: ReadonlyArray<EntryPoint>, root: string): { readonly checker: ts.TypeChecker; readonly names: ReadonlyArray<Named | string> } => {
  const config = ts.getParsedCommandLineOfConfigFile(`${root}tsconfig.json`, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined
  })
  const program = ts.createProgram(entries.map((e) => `${root}${e.file}`), config?.options ?? {})
  const checker = program.getTypeChecker()
  const names: Array<Named | string> = []
  const byName = (a: ts.Symbol, b: ts.Symbol) => (a.name < b.name ? -1 : 1)
  for (const entry of entries) {
    const source = program.getSourceFile(`${root}${entry.file}`)
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    if (module === undefined) {
      names.push(`${entry.specifier}: (missing)`)
      continue
    }
    for (const symbol of [...checker.getExportsOfModule(module)].sort(byName)) {
      const kind = kindOf(checker, symbol)
      names.push({ specifier: entry.specifier, name: symbol.name, symbol, kind })
      if (kind !== "namespace") continue
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      for (const member of [...checker.getExportsOfModule(target)].sort(byName)) {
        names.push({ specifier: entry.specifier, name: `${symbol.name}.${member.name}`, symbol: member, kind: kindOf(checker, member) })
      }
    }
  }
  return { checker, names }
}

/** The list's text. */
export const publicApi = (): string =>
  `${publicNames(entryPoints, repo).names.map((n) => typeof n === "string" ? n : `${n.specifier} ${n.name} ${n.kind}`).join("\n")}\n`

/** A public name and the files (from the root) that declare it. */
export interface Declared {
  readonly name: string
  readonly files: ReadonlyArray<string>
}

/**
 * Where each public name of `entries` is declared: its alias followed to the end of every
 * re-export chain, as an editor's "go to definition" lands (a namespace's declaration is its
 * module's file).
 */
export const declarations = (entries: ReadonlyArray<EntryPoint> = entryPoints, root: string = repo): ReadonlyArray<Declared> => {
  const { checker, names } = publicNames(entries, root)
  return names.flatMap((named) => {
    if (typeof named === "string") return []
    const target = named.symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(named.symbol) : named.symbol
    const files = (target.declarations ?? []).map((d) => relative(root, d.getSourceFile().fileName))
    return [{ name: `${named.specifier} ${named.name}`, files: [...new Set(files)] }]
  })
}

/** Where the committed list lives. */
export const listFile = `${repo}docs/public-api.txt`

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = publicApi()
  writeFileSync(listFile, text)
  console.log(`docs/public-api.txt: ${text.split("\n").length - 1} names`)
}
