/**
 * Why a provisioning command runs: the `{occasion}` of the spec's joint table
 * (spec/capability-plugin-lifecycle.md, "Joints (core-owned)").
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** `birth` and `sweep-on` run `provision`; `remove` and `off-all` run `unprovision`. */
export const Occasion = Schema.Literal("birth", "sweep-on", "remove", "off-all")
export type Occasion = typeof Occasion.Type

/** Which of the declaration's two commands an occasion runs. */
export const commandOf = (occasion: Occasion): "provision" | "unprovision" =>
  occasion === "birth" || occasion === "sweep-on" ? "provision" : "unprovision"
