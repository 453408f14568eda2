/**
 * The files an endpoint's runtime reads at launch (docs/capability-plugin-lifecycle.md, "Writers
 * outside the core": the table of fingerprinted files), from its runtime profile or the spec's
 * defaults. These files are what the Fingerprints compare and what the City-sessions host reads
 * its tools from.
 *
 * Expansion is synchronous (`node:fs`): it runs for every endpoint at every poll of the
 * fingerprint watcher, and a few directory reads are cheaper than a fiber per file.
 * `{privateDir}` on a runtime without one drops that template.
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import { readdirSync } from "node:fs"
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
): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const template of templates) {
    let path = template
    if (path.startsWith("{cwd}/")) path = join(ref.cwd, path.slice(6))
    else if (path.startsWith("{privateDir}/")) {
      if (Option.isNone(ref.privateDir)) continue
      path = join(ref.privateDir.value, path.slice(13))
    }
    const name = basename(path)
    if (!name.includes("*")) {
      if (!exclude.has(name)) out.add(path)
      continue
    }
    const dir = dirname(path)
    const match = globToRegExp(name)
    let entries: Array<string>
    try {
      entries = readdirSync(dir)
    } catch {
      entries = []
    }
    for (const entry of entries) if (match.test(entry) && !exclude.has(entry)) out.add(join(dir, entry))
  }
  return [...out].sort()
}

/**
 * An endpoint's templates resolved once for its cwd and private directory: the plain paths, and
 * the patterns that must be listed again at each look.
 * @since 0.1.0
 * @category model
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
  const fixed = expand(templates.filter((t) => !t.includes("*")), exclude, ref)
  return { cwd: ref.cwd, privateDir, fixed, patterns: templates.filter((t) => t.includes("*")), exclude }
}

/**
 * The files of a resolved endpoint now: the same array as long as it has no patterns.
 * @since 0.1.0
 * @category constructors
 */
export const filesOf = (resolved: Resolved, ref: EndpointRef): ReadonlyArray<string> =>
  resolved.patterns.length === 0
    ? resolved.fixed
    : [...new Set([...resolved.fixed, ...expand(resolved.patterns, resolved.exclude, ref)])].sort()

/**
 * The launch-read files of an endpoint under a host configuration.
 * @since 0.1.0
 * @category constructors
 */
export const launchFiles = (config: HostConfig, ref: EndpointRef): ReadonlyArray<string> => {
  const { exclude, templates } = templatesOf(config, ref.runtime)
  return expand(templates, exclude, ref)
}
