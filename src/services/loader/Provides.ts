/**
 * The manifest's `provides`, enforced (docs/plugin-loader.md, "What provides covers"): a list
 * that is present is deny-by-default and non-fatal, as in the reference loader. A contribution
 * it does not cover is dropped, with a warning naming the plugin, the kind and the name, and the
 * plugin still loads with the rest. A kind whose list is absent is not checked.
 *
 * The mapping from our contributions to the reference's keys:
 * - an action is a tool: `provides.tools`;
 * - a skill: `provides.skills` (also for a skill set replaced live with `requestReload`);
 * - a hook handler: `provides.hooks`, our extension (the reference's `provides` has no key for
 *   hooks; an unknown key inside `provides` is valid there too);
 * - system text and the availability check are not named contributions and are never dropped;
 * - `platforms`, `destinations`, `httpRoutes`, `apiRoutes`, `wsRoutes`, `mcpTools`, `controls`
 *   name kinds this library has no contribution for: they are validated and shown, never enforced.
 * An entry ending in `*` is a prefix pattern (`github_*` covers `github_issues`; `*` alone covers
 * every name); any other entry is an exact name.
 * @since 0.1.0
 */
import type { Skill } from "../../schema/PluginChange.ts"
import type { Manifest } from "../../schema/Manifest.ts"
import type { Contributions } from "../Contributions.ts"

/**
 * A contribution a `provides` list did not cover: its kind, its name, the key that left it out.
 * @since 0.1.0
 * @category models
 */
export interface Dropped {
  readonly kind: "action" | "skill" | "hook"
  readonly name: string
  readonly key: "tools" | "skills" | "hooks"
}

/**
 * Whether a list of names and `prefix*` patterns covers `name`.
 * @since 0.1.0
 * @category utils
 */
export const covers = (list: ReadonlyArray<string>, name: string): boolean =>
  list.some((entry) => (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : entry === name))

/**
 * The warning for one dropped contribution.
 * @since 0.1.0
 * @category utils
 */
export const warning = (plugin: string, dropped: Dropped): string =>
  `plugin ${plugin}: ${dropped.kind} ${JSON.stringify(dropped.name)} dropped: not covered by provides.${dropped.key}`

type Provides = NonNullable<Manifest["provides"]>

const keep = <A>(
  entries: ReadonlyArray<readonly [string, A]>,
  list: ReadonlyArray<string> | undefined,
  kind: Dropped["kind"],
  key: Dropped["key"],
  dropped: Array<Dropped>
) =>
  list === undefined ? entries : entries.filter(([name]) => {
    if (covers(list, name)) return true
    dropped.push({ kind, name, key })
    return false
  })

/**
 * A skill set with the skills `provides.skills` does not cover taken out.
 * @since 0.1.0
 * @category utils
 */
export const enforceSkills = (
  provides: Provides | undefined,
  skills: ReadonlyArray<Skill>
): { readonly skills: ReadonlyArray<Skill>; readonly dropped: ReadonlyArray<Dropped> } => {
  const list = provides?.skills
  if (list === undefined) return { skills, dropped: [] }
  const dropped: Array<Dropped> = []
  const kept = skills.filter((skill) => {
    if (covers(list, skill.name)) return true
    dropped.push({ kind: "skill", name: skill.name, key: "skills" })
    return false
  })
  return { skills: kept, dropped }
}

/**
 * A plugin's contributions with what its `provides` does not cover taken out.
 * @since 0.1.0
 * @category utils
 */
export const enforce = (
  provides: Provides | undefined,
  contributions: Contributions
): { readonly contributions: Contributions; readonly dropped: ReadonlyArray<Dropped> } => {
  if (provides === undefined) return { contributions, dropped: [] }
  const dropped: Array<Dropped> = []
  const actions = contributions.actions === undefined
    ? undefined
    : Object.fromEntries(keep(Object.entries(contributions.actions), provides.tools, "action", "tools", dropped))
  const hooks = contributions.hooks === undefined
    ? undefined
    : Object.fromEntries(keep(Object.entries(contributions.hooks), provides.hooks, "hook", "hooks", dropped))
  const skills = contributions.skills === undefined ? undefined : enforceSkills(provides, contributions.skills)
  if (skills !== undefined) dropped.push(...skills.dropped)
  return dropped.length === 0
    ? { contributions, dropped }
    : { contributions: { ...contributions, actions, hooks, skills: skills?.skills }, dropped }
}
