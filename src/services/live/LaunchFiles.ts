/**
 * The files an endpoint's runtime reads at launch (docs/capability-plugin-lifecycle.md, "Writers
 * outside the core": the table of fingerprinted files), from its runtime profile or the spec's
 * defaults. These files are what the Fingerprints compare and what the City-sessions host reads
 * its tools from.
 *
 * Plain templates are resolved once per endpoint without touching the disk; a pattern (`*` in the
 * last segment) is listed again at each look, through the platform `FileSystem` (asynchronous: it
 * runs at every poll of the daemon's fingerprint watcher). A folder that cannot be listed has no
 * files. `{privateDir}` on a runtime without one drops that template.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { basename, dirname, join } from "node:path"
import type { HostConfig } from "../../schema/HostConfig.ts"
import { defaultLaunchExclude, defaultLaunchFiles } from "../../schema/LiveProfile.ts"
import type { EndpointRef } from "./EndpointHost.ts"

/**
 * The launch-read templates and exclusions of a runtime.
 * @since 0.1.0
 * @category constructors
 */
export const templatesOf = (config: HostConfig, runtime: string) => {
  const profile = config.profiles[runtime]
  return {
    templates: profile?.launch_files ?? defaultLaunchFiles[runtime] ?? [],
    exclude: new Set(profile?.launch_exclude ?? defaultLaunchExclude)
  }
}

const globToRegExp = (pattern: string) =>
  new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`)

/** The path of a template for an endpoint; `None` for `{privateDir}` on a runtime without one. */
const place = (template: string, ref: Pick<EndpointRef, "cwd" | "privateDir">): Option.Option<string> =>
  template.startsWith("{cwd}/")
    ? Option.some(join(ref.cwd, template.slice(6)))
    : template.startsWith("{privateDir}/")
    ? Option.map(ref.privateDir, (dir) => join(dir, template.slice(13)))
    : Option.some(template)

const isPattern = (template: string) => basename(template).includes("*")

/** The plain templates' paths, minus the excluded names (no disk access). */
const plainPaths = (
  templates: ReadonlyArray<string>,
  exclude: ReadonlySet<string>,
  ref: Pick<EndpointRef, "cwd" | "privateDir">
): ReadonlyArray<string> =>
  templates.flatMap((template) =>
    Option.match(place(template, ref), {
      onNone: () => [],
      onSome: (path) => (exclude.has(basename(path)) ? [] : [path])
    })
  )

/** The files that match the pattern templates now, minus the excluded names. */
const patternPaths = (
  templates: ReadonlyArray<string>,
  exclude: ReadonlySet<string>,
  ref: Pick<EndpointRef, "cwd" | "privateDir">
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(
      Effect.forEach(Arr.getSomes(templates.map((template) => place(template, ref))), (path) => {
        const dir = dirname(path)
        const match = globToRegExp(basename(path))
        return fs.readDirectory(dir).pipe(
          Effect.map((entries) => entries.filter((entry) => match.test(entry) && !exclude.has(entry)).map((entry) => join(dir, entry))),
          Effect.orElseSucceed((): ReadonlyArray<string> => [])
        )
      }),
      (lists) => lists.flat()
    ))

/**
 * The concrete files of an endpoint, sorted: plain templates as they are (present or not),
 * patterns expanded to the files that exist now, minus the excluded names.
 * @since 0.1.0
 * @category constructors
 */
export const expand = (
  templates: ReadonlyArray<string>,
  exclude: ReadonlySet<string>,
  ref: Pick<EndpointRef, "cwd" | "privateDir">
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  Effect.map(
    patternPaths(templates.filter(isPattern), exclude, ref),
    (found) => [...new Set([...plainPaths(templates.filter((t) => !isPattern(t)), exclude, ref), ...found])].sort()
  )

/**
 * An endpoint's templates resolved once for its cwd and private directory: the plain paths, and
 * the patterns that must be listed again at each look.
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly cwd: string
  readonly privateDir: string | undefined
  readonly fixed: ReadonlyArray<string>
  readonly patterns: ReadonlyArray<string>
  readonly exclude: ReadonlySet<string>
}

/**
 * Resolves an endpoint's templates; `previous` is reused when cwd and private directory match.
 * @since 0.1.0
 * @category constructors
 */
export const resolveTemplates = (config: HostConfig, ref: EndpointRef, previous?: Resolved): Resolved => {
  const privateDir = Option.getOrUndefined(ref.privateDir)
  if (previous !== undefined && previous.cwd === ref.cwd && previous.privateDir === privateDir) return previous
  const { exclude, templates } = templatesOf(config, ref.runtime)
  const fixed = [...new Set(plainPaths(templates.filter((t) => !isPattern(t)), exclude, ref))].sort()
  return { cwd: ref.cwd, privateDir, fixed, patterns: templates.filter(isPattern), exclude }
}

/**
 * The files of a resolved endpoint now: the same array as long as it has no patterns.
 * @since 0.1.0
 * @category constructors
 */
export const filesOf = (
  resolved: Resolved,
  ref: EndpointRef
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> =>
  resolved.patterns.length === 0
    ? Effect.succeed(resolved.fixed)
    : Effect.map(
      patternPaths(resolved.patterns, resolved.exclude, ref),
      (found) => [...new Set([...resolved.fixed, ...found])].sort()
    )

/**
 * The launch-read files of an endpoint under a host configuration.
 * @since 0.1.0
 * @category constructors
 */
export const launchFiles = (
  config: HostConfig,
  ref: EndpointRef
): Effect.Effect<ReadonlyArray<string>, never, FileSystem.FileSystem> => {
  const { exclude, templates } = templatesOf(config, ref.runtime)
  return expand(templates, exclude, ref)
}

/**
 * Where an endpoint's launch-read files live: a folder, and which names in it are launch-read
 * files (a plain file's name, or a pattern's, minus the excluded names), whether the folder exists
 * or not. What the fingerprint watcher watches.
 * @since 0.1.0
 * @category models
 */
export interface Place {
  readonly folder: string
  readonly matches: (name: string) => boolean
}

/**
 * The places of a resolved endpoint: one per folder.
 * @since 0.1.0
 * @category getters
 */
export const placesOf = (resolved: Resolved, ref: Pick<EndpointRef, "cwd" | "privateDir">): ReadonlyArray<Place> => {
  const names = new Map<string, Array<(name: string) => boolean>>()
  const add = (path: string, match: (name: string) => boolean) => {
    const folder = dirname(path)
    names.set(folder, [...(names.get(folder) ?? []), match])
  }
  for (const file of resolved.fixed) add(file, (name) => name === basename(file))
  for (const path of Arr.getSomes(resolved.patterns.map((template) => place(template, ref)))) {
    const pattern = globToRegExp(basename(path))
    add(path, (name) => pattern.test(name) && !resolved.exclude.has(name))
  }
  return [...names].map(([folder, matchers]) => ({ folder, matches: (name) => matchers.some((m) => m(name)) }))
}
