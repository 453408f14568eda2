/**
 * A peer, `$CITY_ROOT/peers/<personality>.json`: a personality with its working
 * directory and the runtimes it declares (agent and channel runtimes alike).
 * The default runtime is always one of the declared runtimes.
 *
 * Printed fields: `cwd` is under the rule of src/schema/Printable.ts (no control,
 * bidirectional or line-separator characters); `personality`, `runtimes` and `default_runtime`
 * are names (src/schema/Name.ts), stricter still.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Name } from "./Name.ts"
import { printable } from "./Printable.ts"

/**
 * A peer file, `peers/<personality>.json`: its working directory, its runtimes and the default one.
 * @since 0.1.0
 * @category schemas
 */
export const Peer = Schema.Struct({
  schema: Schema.Literal(1).annotations({ message: () => "must be 1" }),
  personality: Name,
  cwd: Schema.String.pipe(Schema.filter((s) => s.startsWith("/") || "must be an absolute path"), printable),
  runtimes: Schema.Array(Name).pipe(
    Schema.filter((rs) => rs.length > 0 || "must be a non-empty list of runtime names"),
    Schema.filter((rs) => new Set(rs).size === rs.length || "must not list a runtime twice")
  ),
  default_runtime: Name
}).pipe(
  Schema.filter((peer) =>
    peer.runtimes.includes(peer.default_runtime) ||
    { path: ["default_runtime"], message: "must be one of the peer's runtimes" }
  )
)
/**
 * A peer file, `peers/<personality>.json`: its working directory, its runtimes and the default one.
 * @since 0.1.0
 * @category models
 */
export type Peer = typeof Peer.Type
