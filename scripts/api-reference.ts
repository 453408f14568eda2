/**
 * The API reference (typedoc, configured by `typedoc.json`) and its check: the part of the public
 * surface a reader of the reference needs a sentence for must have one.
 *
 * The rule, on the reflections typedoc builds from the entry points (`src/index.ts`,
 * `src/plugin.ts`):
 * - every entry point (module) has a summary;
 * - every export of an entry point or of one of its namespaces has a summary: namespaces, classes,
 *   interfaces, type aliases, functions, variables, enums (a re-export is documented where it is
 *   declared);
 * - every property, method and accessor an exported interface declares (not inherits) has a
 *   summary: a service's shape is an interface, and its members are what a caller calls.
 *
 * Not required: the members of classes (the fields of a `Schema.Class` or `Schema.TaggedError` are
 * its schema, shown with their types; `message` getters), the properties of object types written
 * inline (an option bag's fields, a union member's `_tag`), parameters and type parameters.
 * `test/repository/Docs.test.ts` checks the tags (`@since`, `@category`) on the source; this check is about
 * what the reference shows.
 *
 * A summary is the text of a doc comment before its first block tag: `/** @since 0.1.0 *\/` alone
 * does not count.
 */
import {
  Application,
  type Comment,
  DeclarationReflection,
  type OptionsReader,
  type ProjectReflection,
  ReflectionKind,
  type TypeDocOptions
} from "typedoc"

const exportKinds = ReflectionKind.Namespace |
  ReflectionKind.Class |
  ReflectionKind.Interface |
  ReflectionKind.TypeAlias |
  ReflectionKind.Function |
  ReflectionKind.Variable |
  ReflectionKind.Enum

const memberKinds = ReflectionKind.Property | ReflectionKind.Method | ReflectionKind.Accessor

const hasSummary = (comment: Comment | undefined): boolean =>
  comment !== undefined && comment.summary.some((part) => part.text.trim() !== "")

/** A function's or method's comment sits on its signatures, an accessor's on its get signature. */
const documented = (reflection: DeclarationReflection): boolean =>
  hasSummary(reflection.comment) ||
  (reflection.signatures ?? []).some((signature) => hasSummary(signature.comment)) ||
  hasSummary(reflection.getSignature?.comment)

const required = (reflection: DeclarationReflection): boolean => {
  const parent = reflection.parent
  if (reflection.kindOf(ReflectionKind.Module)) return true
  if (parent === undefined) return false
  if (parent.kindOf(ReflectionKind.Project | ReflectionKind.Module | ReflectionKind.Namespace)) {
    return reflection.kindOf(exportKinds)
  }
  return parent.kindOf(ReflectionKind.Interface) && reflection.kindOf(memberKinds) &&
    reflection.inheritedFrom === undefined
}

/**
 * One line per reflection the rule requires a summary of and that has none:
 * `file:line: Kind name`, sorted, each source location once (the two entry points share modules).
 */
export const undocumented = (project: ProjectReflection): Array<string> => {
  const problems = new Set<string>()
  for (const reflection of Object.values(project.reflections)) {
    if (!(reflection instanceof DeclarationReflection) || !required(reflection) || documented(reflection)) continue
    const source = reflection.sources?.[0]
    const where = source === undefined ? "(no source)" : `${source.fileName}:${source.line}`
    problems.add(`${where}: ${ReflectionKind.singularString(reflection.kind)} ${reflection.getFriendlyFullName()}`)
  }
  return [...problems].sort()
}

/**
 * What the check asks typedoc for whatever the configuration says: sources (for `file:line`), and
 * not typedoc's own `notDocumented` (it cannot express the rule above: it counts `@since` alone as
 * documentation and requires a kind everywhere or nowhere).
 */
export const checkOptions: Partial<TypeDocOptions> = {
  disableSources: false,
  // Source links relative to the repository, without asking git for a web remote: a clone of a
  // path (as CI makes) has none, and typedoc warns about it.
  disableGit: true,
  sourceLinkTemplate: "../../{path}#L{line}",
  validation: { notExported: false, notDocumented: false, invalidLink: true, rewrittenLink: true }
}

/**
 * Converts the entry points and applies the rule. Fails (returns problems) also when typedoc
 * itself reports an error or a warning (a broken `{@link}`, a comment it cannot parse).
 */
export const check = async (
  options: Partial<TypeDocOptions>,
  readers: ReadonlyArray<OptionsReader>
): Promise<{
  readonly app: Application
  readonly project: ProjectReflection | undefined
  readonly problems: Array<string>
}> => {
  const app = await Application.bootstrapWithPlugins({ ...options, ...checkOptions }, readers)
  const project = await app.convert()
  if (project === undefined) return { app, project, problems: ["typedoc could not convert the entry points"] }
  app.validate(project)
  const problems = undocumented(project).map((line) => `${line} has no doc comment summary`)
  if (app.logger.hasErrors() || app.logger.hasWarnings()) problems.push("typedoc reported errors or warnings (above)")
  return { app, project, problems }
}
