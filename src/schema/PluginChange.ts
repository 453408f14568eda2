/**
 * What a plugin asks of its host through `requestReload` (docs/plugin-loader-lifecycle.md:
 * "requestReload({ mode: 'reload', skills }) replaces it in the running daemon ... Any other
 * change uses the restart form, which carries a reason").
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A skill: plain data (at least a name), resolved per Turn; a plugin can replace its set live.
 * @since 0.1.0
 * @category models
 */
export const Skill = Schema.Struct({ name: Schema.String }, { key: Schema.String, value: Schema.Unknown })
/**
 * A skill: plain data, at least a name.
 * @since 0.1.0
 * @category models
 */
export type Skill = typeof Skill.Type

/**
 * Replace this plugin's whole skill set in the running City.
 * @since 0.1.0
 * @category models
 */
export const SkillsReload = Schema.Struct({ mode: Schema.Literal("reload"), skills: Schema.Array(Skill) }).annotations({
  identifier: "SkillsReload"
})
/**
 * Rebuild the plugin set from disk (a new generation), for any change other than skills.
 * @since 0.1.0
 * @category models
 */
export const Restart = Schema.Struct({ mode: Schema.Literal("restart"), reason: Schema.String }).annotations({
  identifier: "Restart"
})

/**
 * What `requestReload` asks for: a skills reload or a restart, as a Schema.
 * @since 0.1.0
 * @category models
 */
export const PluginChange = Schema.Union(SkillsReload, Restart)
/**
 * What `requestReload` asks for: a skills reload or a restart.
 * @since 0.1.0
 * @category models
 */
export type PluginChange = typeof PluginChange.Type
