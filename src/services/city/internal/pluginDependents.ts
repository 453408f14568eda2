/**
 * The registry's dependency table (docs/library.md, "Plugin dependencies"): what each admitted
 * plugin requires, the plugins that require each plugin (not optionally), and the plugins being
 * removed, on which no new dependent is admitted. Synchronous bookkeeping for `add`, `remove` and
 * close; a dependent stays in the table from its admission until it fails to start or leaves.
 * @since 0.1.0
 */
import type { Requirement } from "../../Plugin.ts"

/**
 * The dependency table of one registry.
 * @since 0.1.0
 * @category models
 */
export interface PluginDependents {
  /** What each admitted plugin with requirements requires. */
  readonly requiresOf: ReadonlyMap<string, ReadonlyArray<Requirement>>
  /** The required plugins of `requires` that are not ready (`isReady`) or are being removed, sorted. */
  readonly missing: (requires: ReadonlyArray<Requirement>, isReady: (name: string) => boolean) => ReadonlyArray<string>
  /** `name` is admitted with its requirements: the plugins it requires stay until it is gone. */
  readonly admit: (name: string, requires: ReadonlyArray<Requirement>) => void
  /** `name` failed to start or left: it no longer holds what it required. */
  readonly forget: (name: string) => void
  /** The admitted plugins that require `name`, sorted. */
  readonly of: (name: string) => ReadonlyArray<string>
  /** `name` is being removed: no new dependent is admitted on it until `endRemoval`. */
  readonly beginRemoval: (name: string) => void
  /** The removal of `name` ended. */
  readonly endRemoval: (name: string) => void
}

/**
 * Makes an empty table.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): PluginDependents => {
  const requiresOf = new Map<string, ReadonlyArray<Requirement>>()
  const dependents = new Map<string, Set<string>>()
  const leaving = new Set<string>()
  return {
    requiresOf,
    missing: (requires, isReady) => {
      const missing = requires.filter((r) => !r.optional && (!isReady(r.name) || leaving.has(r.name))).map((r) => r.name)
      return missing.length === 0 ? missing : [...new Set(missing)].sort()
    },
    admit: (name, requires) => {
      requiresOf.set(name, requires)
      for (const r of requires) {
        if (r.optional) continue
        const set = dependents.get(r.name)
        if (set === undefined) dependents.set(r.name, new Set([name]))
        else set.add(name)
      }
    },
    forget: (name) => {
      const requires = requiresOf.get(name)
      if (requires === undefined) return
      requiresOf.delete(name)
      for (const r of requires) {
        const set = dependents.get(r.name)
        if (set === undefined) continue
        set.delete(name)
        if (set.size === 0) dependents.delete(r.name)
      }
    },
    of: (name) => [...(dependents.get(name) ?? [])].sort(),
    beginRemoval: (name) => void leaving.add(name),
    endRemoval: (name) => void leaving.delete(name)
  }
}
