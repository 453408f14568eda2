/**
 * The dependency graph of a set of plugins (docs/library.md, "Plugin dependencies"): each plugin
 * by name with the plugins it requires. An edge counts when its target is in the set (a required
 * one outside it is the caller's `PluginDependencyMissing`; an optional one outside it is simply
 * absent). Pure functions; names are taken in code-unit order wherever there is a choice, so every
 * order is the same on every run.
 * @since 0.1.0
 */
import type { Requirement } from "../../Plugin.ts"

/**
 * A set of plugins: each name with what it requires.
 * @since 0.1.0
 * @category models
 */
export type Graph = ReadonlyMap<string, ReadonlyArray<Requirement>>

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The names `name` depends on within the graph, in name order. */
const edgesOf = (graph: Graph, name: string): ReadonlyArray<string> =>
  (graph.get(name) ?? []).map((r) => r.name).filter((dep) => dep !== name && graph.has(dep)).sort(byName)

/**
 * A cycle of the graph, if it has one: the plugins around it, the first one again at the end.
 * @since 0.1.0
 * @category constructors
 */
export const findCycle = (graph: Graph): ReadonlyArray<string> | undefined => {
  const done = new Set<string>()
  const path: Array<string> = []
  const onPath = new Set<string>()
  const visit = (name: string): ReadonlyArray<string> | undefined => {
    if (done.has(name)) return undefined
    if (onPath.has(name)) return [...path.slice(path.indexOf(name)), name]
    onPath.add(name)
    path.push(name)
    for (const dep of edgesOf(graph, name)) {
      const cycle = visit(dep)
      if (cycle !== undefined) return cycle
    }
    path.pop()
    onPath.delete(name)
    done.add(name)
    return undefined
  }
  // A self-requirement is a cycle of one.
  for (const [name, requires] of graph) if (requires.some((r) => r.name === name)) return [name, name]
  for (const name of [...graph.keys()].sort(byName)) {
    const cycle = visit(name)
    if (cycle !== undefined) return cycle
  }
  return undefined
}

/**
 * The initialize order of an acyclic graph, in waves: the first holds the plugins that depend on
 * none of the set, each next one those whose dependencies are all in earlier waves. The plugins
 * of one wave are independent of each other.
 * @since 0.1.0
 * @category constructors
 */
export const initializeWaves = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const depth = new Map<string, number>()
  const depthOf = (name: string): number => {
    const known = depth.get(name)
    if (known !== undefined) return known
    depth.set(name, 0) // a cycle (refused before) cannot recurse forever
    const d = edgesOf(graph, name).reduce((max, dep) => Math.max(max, depthOf(dep) + 1), 0)
    depth.set(name, d)
    return d
  }
  return toWaves([...graph.keys()], depthOf)
}

/**
 * The dispose order: in waves, each plugin after every plugin of the set that depends on it (a
 * dependent is disposed before what it depends on); the plugins of one wave are independent.
 * @since 0.1.0
 * @category constructors
 */
export const disposeWaves = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const dependents = new Map<string, Array<string>>()
  for (const name of graph.keys()) {
    for (const dep of edgesOf(graph, name)) {
      const list = dependents.get(dep)
      if (list === undefined) dependents.set(dep, [name])
      else list.push(name)
    }
  }
  const depth = new Map<string, number>()
  const depthOf = (name: string): number => {
    const known = depth.get(name)
    if (known !== undefined) return known
    depth.set(name, 0)
    const d = (dependents.get(name) ?? []).reduce((max, dependent) => Math.max(max, depthOf(dependent) + 1), 0)
    depth.set(name, d)
    return d
  }
  return toWaves([...graph.keys()], depthOf)
}

const toWaves = (names: ReadonlyArray<string>, depthOf: (name: string) => number): ReadonlyArray<ReadonlyArray<string>> => {
  const waves: Array<Array<string>> = []
  for (const name of names) {
    const d = depthOf(name)
    while (waves.length <= d) waves.push([])
    waves[d]!.push(name)
  }
  for (const wave of waves) wave.sort(byName)
  return waves.filter((wave) => wave.length > 0)
}

/**
 * Every plugin of the graph that depends on one of `roots`, directly or through others (the
 * roots themselves excluded), in name order.
 * @since 0.1.0
 * @category constructors
 */
export const transitiveDependents = (graph: Graph, roots: ReadonlyArray<string>, requiredOnly = false): ReadonlyArray<string> => {
  const found = new Set<string>()
  const frontier = [...roots]
  while (frontier.length > 0) {
    const target = frontier.pop()!
    for (const [name, requires] of graph) {
      if (found.has(name) || roots.includes(name)) continue
      if (requires.some((r) => r.name === target && (!requiredOnly || !r.optional))) {
        found.add(name)
        frontier.push(name)
      }
    }
  }
  return [...found].sort(byName)
}
