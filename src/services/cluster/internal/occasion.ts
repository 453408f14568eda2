/**
 * The occasion of a sweep verb's calls, for the sweep and the host that runs them.
 * @since 0.1.0
 */
import type { Occasion } from "../../../schema/Occasion.ts"
import type { SweepVerb } from "../FleetCalls.ts"

/**
 * The occasion of a sweep verb's calls: `sweep-on` for `register` and `sync`, `off-all` for
 * `unregister` (docs/capability-plugin-lifecycle.md, "Joints (core-owned)").
 * @since 0.1.0
 * @category internals
 */
export const occasionOf = (verb: SweepVerb): Occasion => verb === "unregister" ? "off-all" : "sweep-on"
