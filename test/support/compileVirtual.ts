/**
 * The compiler's messages for one small program held in memory: `text` as the file `file` (beside
 * the test that asks, so its relative imports resolve as there), type-checked with the
 * repository's tsconfig. What a user would read when that program does not compile.
 */
import * as path from "node:path"
import ts from "typescript"

const root = path.join(import.meta.dirname, "../..")

/** The semantic diagnostics of `file` holding `text`, each flattened to its text. */
export const compileVirtual = (file: string, text: string): ReadonlyArray<string> => {
  const config = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile)
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest)
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => name === file || fileExists(name)
  const program = ts.createProgram({ rootNames: [file], options, host })
  return program.getSemanticDiagnostics(program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}
