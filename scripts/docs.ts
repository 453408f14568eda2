/**
 * `npm run docs`: the API reference from the doc comments, as HTML in `docs/api/` (gitignored).
 * `npm run docs:check` (part of `npm test`): no output, only the check of scripts/api-reference.ts;
 * exits 1 on an undocumented public export.
 */
import { TSConfigReader, TypeDocReader } from "typedoc"
import { check } from "./api-reference.ts"

const checkOnly = process.argv.includes("--check")
const { app, project, problems } = await check({}, [new TypeDocReader(), new TSConfigReader()])

if (problems.length > 0) {
  console.error(`API reference: ${problems.length} problem(s)\n${problems.join("\n")}`)
  process.exit(1)
}
if (project !== undefined && !checkOnly) {
  await app.generateDocs(project, app.options.getValue("out"))
  console.log(`API reference: ${app.options.getValue("out")}/index.html`)
} else {
  console.log("API reference: every public export is documented")
}
