/**
 * Execution views (docs/city-plugin-lifecycle.md, "Execution leases": "A Session captures an
 * immutable Plugin execution view at each Step checkpoint"). A view is the registry's ready plugins
 * at one version of the registry, in name order; it never changes after it is made.
 *
 * What user code sees of a view is names and contributions: a plugin's Scope, and so its dispose,
 * stays with the registry (a Step cannot close a plugin behind the registry's back).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as SortedMap from "effect/SortedMap"
import type { Contributions, Hook } from "../Contributions.ts"

/**
 * One plugin as a view shows it.
 * @since 0.1.0
 * @category models
 */
export interface PluginView {
  /** The plugin's name. */
  readonly name: string
  /** The plugin's version, if it has one. */
  readonly version: string | undefined
  /** What its initialize returned (its skills as of this view). */
  readonly contributions: Contributions
}

/** The hooks of every plugin that has none: one shared, empty table. */
const noHooks: ReadonlyMap<string, ReadonlyArray<Hook>> = new Map()

/**
 * One initialized plugin in a view. `life` identifies the instance across views: a skill
 * reload publishes a new PluginInstance of the same life (same Scope, same dispose).
 * @since 0.1.0
 * @category internals
 */
export class PluginInstance implements PluginView {
  readonly hooks: ReadonlyMap<string, ReadonlyArray<Hook>>
  constructor(
    readonly name: string,
    readonly version: string | undefined,
    readonly contributions: Contributions,
    readonly life: object
  ) {
    if (contributions.hooks === undefined) {
      this.hooks = noHooks
      return
    }
    const hooks = new Map<string, ReadonlyArray<Hook>>()
    for (const [point, handler] of Object.entries(contributions.hooks)) {
      hooks.set(point, typeof handler === "function" ? [handler] : handler)
    }
    this.hooks = hooks
  }
}

/**
 * The ready plugins by name, in code-unit order: a persistent sorted map, so each registry change
 * costs O(log P) and every view made from it stays immutable.
 * @since 0.1.0
 * @category internals
 */
export type Plugins = SortedMap.SortedMap<string, PluginInstance>

/**
 * No ready plugins: the registry's start.
 * @since 0.1.0
 * @category internals
 */
export const emptyPlugins: Plugins = SortedMap.empty<string, PluginInstance>(Order.string)

/**
 * An immutable view of the ready plugins at one version of the registry, in code-unit name order.
 * Making one costs O(1) (it shares the registry's persistent map); the name-ordered array is built
 * the first time someone iterates the view.
 * @since 0.1.0
 * @category models
 */
export class ExecutionView {
  readonly #map: Plugins
  #list: ReadonlyArray<PluginInstance> | undefined
  constructor(
    /** The registry's version this view shows: 0 at the start, one more at each change. */
    readonly version: number,
    map: Plugins
  ) {
    this.#map = map
  }
  /** The plugins of this view, in name order. */
  get plugins(): ReadonlyArray<PluginView> {
    return ExecutionView.instances(this)
  }
  /** The plugin names of this view, in name order. */
  get names(): ReadonlyArray<string> {
    return ExecutionView.instances(this).map((p) => p.name)
  }
  /** The plugin of this name in this view, if it is ready in it. */
  get(name: string): PluginView | undefined {
    return instanceIn(this, name)
  }
  /** Whether a plugin of this name is ready in this view. */
  has(name: string): boolean {
    return SortedMap.has(this.#map, name)
  }
  /** @internal the instances in name order, for the City's own services */
  static instances(view: ExecutionView): ReadonlyArray<PluginInstance> {
    view.#list ??= Array.from(SortedMap.values(view.#map))
    return view.#list
  }
  /** @internal */
  static lookup(view: ExecutionView, name: string): PluginInstance | undefined {
    return Option.getOrUndefined(SortedMap.get(view.#map, name))
  }
}

/**
 * The instance named `name` in a view, for the City's own services.
 * @since 0.1.0
 * @category internals
 */
export const instanceIn = (view: ExecutionView, name: string): PluginInstance | undefined =>
  ExecutionView.lookup(view, name)

/**
 * Whether a view contains this life of a plugin.
 * @since 0.1.0
 * @category internals
 */
export const contains = (view: ExecutionView, instance: PluginInstance): boolean =>
  instanceIn(view, instance.name)?.life === instance.life

/**
 * `plugins` with `instance` in its name's place. O(log P).
 * @since 0.1.0
 * @category internals
 */
export const withInstance = (plugins: Plugins, instance: PluginInstance): Plugins =>
  SortedMap.set(plugins, instance.name, instance)

/**
 * `plugins` without the plugin named `name`. O(log P).
 * @since 0.1.0
 * @category internals
 */
export const without = (plugins: Plugins, name: string): Plugins => SortedMap.remove(plugins, name)

/** Each view's sibling-service providers by Tag key, found once per view. */
const providers = new WeakMap<ExecutionView, Map<string, Option.Option<unknown>>>()

/**
 * The service of `tag` of the first plugin of `view` (in name order) that provides it
 * (`Contributions.services`), remembered for the view (a view never changes).
 * @since 0.1.0
 * @category constructors
 */
export const providerIn = <I, S>(view: ExecutionView, tag: Context.Tag<I, S>): Option.Option<S> => {
  let known = providers.get(view)
  if (known === undefined) providers.set(view, known = new Map())
  const cached = known.get(tag.key)
  if (cached !== undefined) return cached as Option.Option<S>
  let found: Option.Option<S> = Option.none()
  for (const instance of ExecutionView.instances(view)) {
    const services = instance.contributions.services as Context.Context<I> | undefined
    if (services === undefined) continue
    found = Context.getOption(services, tag)
    if (Option.isSome(found)) break
  }
  known.set(tag.key, found)
  return found
}
