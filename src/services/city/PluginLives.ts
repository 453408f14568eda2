/**
 * The registry's plugin lives: the started instance of each name (ready or disposing), and the
 * ready ones as the persistent map every execution view is published from. Joining, leaving the
 * view and replacing an instance publish the next view (O(log P)); leaving the table is separate,
 * since a removed plugin keeps its life (disposing) until its disposal has run.
 * @since 0.1.0
 */
import * as SortedMap from "effect/SortedMap"
import type { Skill } from "../../schema/PluginChange.ts"
import { emptyPlugins, PluginInstance, type Plugins, without, withInstance } from "./ExecutionView.ts"
import type { LeaseTableShape } from "./LeaseTable.ts"
import type { PluginLife } from "./PluginLife.ts"

/**
 * The live plugins of one registry.
 * @since 0.1.0
 * @category models
 */
export interface PluginLives {
  readonly get: (name: string) => PluginLife | undefined
  /** Whether `name` is ready: in the next view. */
  readonly isReady: (name: string) => boolean
  /** Every live plugin, by name. */
  readonly all: ReadonlyMap<string, PluginLife>
  /** A started instance becomes live and ready: in the next view. */
  readonly join: (name: string, life: PluginLife) => void
  /** Out of the next view (it stays live until it `leave`s). */
  readonly hide: (name: string) => void
  /** Out of the table, if `life` is still the live one of `name`. */
  readonly leave: (name: string, life: PluginLife) => boolean
  /** The next view carries `skills` as the plugin's skill set. */
  readonly replaceSkills: (life: PluginLife, skills: ReadonlyArray<Skill>) => void
  /** Publishes an empty view (close). */
  readonly hideAll: () => void
}

/**
 * Makes an empty table that publishes to `views`.
 * @since 0.1.0
 * @category constructors
 */
export const make = (views: LeaseTableShape): PluginLives => {
  const lives = new Map<string, PluginLife>()
  let ready: Plugins = emptyPlugins
  const publish = (next: Plugins) => {
    ready = next
    views.publish(ready)
  }
  return {
    get: (name) => lives.get(name),
    isReady: (name) => SortedMap.has(ready, name),
    all: lives,
    join: (name, life) => {
      lives.set(name, life)
      publish(withInstance(ready, life.instance))
    },
    hide: (name) => publish(without(ready, name)),
    leave: (name, life) => lives.get(name) === life && lives.delete(name),
    replaceSkills: (life, skills) => {
      const previous = life.instance
      const instance = new PluginInstance(
        previous.name,
        previous.version,
        { ...previous.contributions, skills },
        previous.life
      )
      life.instance = instance
      publish(withInstance(ready, instance))
    },
    hideAll: () => publish(emptyPlugins)
  }
}
