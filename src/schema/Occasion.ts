/**
 * Why a provisioning command runs: the `{occasion}` of the spec's joint table
 * (docs/capability-plugin-lifecycle.md, "Joints (core-owned)").
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `birth` and `sweep-on` run `provision`; `remove` and `off-all` run `unprovision`.
 * @since 0.1.0
 * @category schemas
 */
export const Occasion = Schema.Literal("birth", "sweep-on", "remove", "off-all")
/**
 * Why a provisioning call runs: `birth`, `sweep-on`, `remove` or `off-all`.
 * @since 0.1.0
 * @category models
 */
export type Occasion = typeof Occasion.Type
