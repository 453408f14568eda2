/**
 * The public API as a list: every name the package's entry points export (`effect-city`,
 * `effect-city/plugin`, `effect-city/testing`, `effect-city/cluster`), one line each, namespaces with their members, each
 * with its kind. `npm run api` writes it to `docs/public-api.txt`; test/public-api.test.ts fails
 * when the committed file differs from what the entry points export now, so a change of the public
 * surface is always a deliberate, reviewed edit of that file.
 */
import { writeFileSync } from "node:fs"
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

/** The list's text. */
export const publicApi = (): string => {
  const config = ts.getParsedCommandLineOfConfigFile(`${repo}tsconfig.json`, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined
  })
  const program = ts.createProgram(entryPoints.map((e) => `${repo}${e.file}`), config?.options ?? {})
  const checker = program.getTypeChecker()
  const lines: Array<string> = []
  for (const entry of entryPoints) {
    const source = program.getSourceFile(`${repo}${entry.file}`)
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    if (module === undefined) {
      lines.push(`${entry.specifier}: (missing)`)
      continue
    }
    for (const symbol of [...checker.getExportsOfModule(module)].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const kind = kindOf(checker, symbol)
      lines.push(`${entry.specifier} ${symbol.name} ${kind}`)
      if (kind !== "namespace") continue
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      for (const member of [...checker.getExportsOfModule(target)].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        lines.push(`${entry.specifier} ${symbol.name}.${member.name} ${kindOf(checker, member)}`)
      }
    }
  }
  return `${lines.join("\n")}\n`
}

/** Where the committed list lives. */
export const listFile = `${repo}docs/public-api.txt`

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = publicApi()
  writeFileSync(listFile, text)
  console.log(`docs/public-api.txt: ${text.split("\n").length - 1} names`)
}
