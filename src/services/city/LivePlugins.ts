/**
 * The registry's live plugins: the started instance of each name (ready or disposing), and the
 * ready ones as the persistent map every execution view is published from. Joining, leaving the
 * view and replacing an instance publish the next view (O(log P)); leaving the table is separate,
 * since a removed plugin stays live (disposing) until its disposal has run.
 * @since 0.1.0
 */
import type { Skill } from "../../schema/PluginChange.ts"
import { emptyPlugins, PluginInstance, type Plugins, without, withInstance } from "./ExecutionView.ts"
import type { ExecutionViewsShape } from "./ExecutionViews.ts"
import type { Incarnation } from "./Incarnation.ts"

/**
 * The live plugins of one registry.
 * @since 0.1.0
 * @category models
 */
export interface LivePlugins {
  readonly get: (name: string) => Incarnation | undefined
  /** Every live plugin, by name. */
  readonly all: ReadonlyMap<string, Incarnation>
  /** A started instance becomes live and ready: in the next view. */
  readonly join: (name: string, incarnation: Incarnation) => void
  /** Out of the next view (it stays live until it `leave`s). */
  readonly hide: (name: string) => void
  /** Out of the table, if `incarnation` is still the live one of `name`. */
  readonly leave: (name: string, incarnation: Incarnation) => boolean
  /** The next view carries `skills` as the plugin's skill set. */
  readonly replaceSkills: (incarnation: Incarnation, skills: ReadonlyArray<Skill>) => void
  /** Publishes an empty view (close). */
  readonly hideAll: () => void
}

/**
 * Makes an empty table that publishes to `views`.
 * @since 0.1.0
 * @category constructors
 */
export const make = (views: ExecutionViewsShape): LivePlugins => {
  const lives = new Map<string, Incarnation>()
  let ready: Plugins = emptyPlugins
  const publish = (next: Plugins) => {
    ready = next
    views.publish(ready)
  }
  return {
    get: (name) => lives.get(name),
    all: lives,
    join: (name, incarnation) => {
      lives.set(name, incarnation)
      publish(withInstance(ready, incarnation.instance))
    },
    hide: (name) => publish(without(ready, name)),
    leave: (name, incarnation) => lives.get(name) === incarnation && lives.delete(name),
    replaceSkills: (incarnation, skills) => {
      const previous = incarnation.instance
      const instance = new PluginInstance(
        previous.name,
        previous.version,
        { ...previous.contributions, skills },
        previous.incarnation
      )
      incarnation.instance = instance
      publish(withInstance(ready, instance))
    },
    hideAll: () => publish(emptyPlugins)
  }
}
