/**
 * The host configuration, `$CITY_ROOT/host.json`: which runtimes this host can
 * run as agents, which are channels, and each runtime's profile. An absent file
 * means the defaults below (the spec's claude / codex / opencode table).
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { HttpListenAddress } from "./HttpListen.ts"
import { LiveProfileFields } from "./LiveProfile.ts"
import { Name } from "./Name.ts"
import { patternProblem } from "./Redaction.ts"

/**
 * A runtime's profile. `private_dir` is relative to the root and carries `{personality}`.
 * @since 0.1.0
 * @category schemas
 */
export const RuntimeProfile = Schema.Struct({
  private_dir: Schema.optional(
    Schema.String.pipe(
      Schema.filter((s) => !s.startsWith("/") || "must be relative to the state root"),
      Schema.filter((s) => !s.split("/").includes("..") || "must stay inside the state root (no '..')"),
      Schema.filter((s) => s.includes("{personality}") || "must carry {personality}: each peer has its own")
    )
  ),
  // Live application (docs/capability-plugin-lifecycle.md, "Applying surfaces to a live endpoint"): launch-read files and the endpoint commands.
  ...LiveProfileFields
})
/**
 * A runtime's profile, as decoded.
 * @since 0.1.0
 * @category models
 */
export type RuntimeProfile = typeof RuntimeProfile.Type

/**
 * `host.json`: which runtimes are agents and which are channels, and each runtime's profile.
 * @since 0.1.0
 * @category schemas
 */
export const HostConfig = Schema.Struct({
  schema: Schema.Literal(1).annotations({ message: () => "must be 1" }),
  agent_runtimes: Schema.Array(Name),
  channel_runtimes: Schema.Array(Name),
  profiles: Schema.Record({ key: Name, value: RuntimeProfile }),
  /**
   * The host's own redaction patterns (schema/Redaction.ts), after the defaults: each a JavaScript
   * regular expression, without flags, that does not match the empty text.
   */
  redact: Schema.optional(Schema.Array(
    Schema.String.pipe(Schema.filter((source) => patternProblem(source) ?? true))
  )),
  /** The daemon's own settings; its flags win over them (docs/status-page.md). */
  daemon: Schema.optional(Schema.Struct({
    /** The status page: where it listens, whether a non-loopback address is allowed, the token's file (relative to the root). */
    http: Schema.optional(Schema.Struct({
      listen: HttpListenAddress,
      public: Schema.optional(Schema.Boolean),
      token_file: Schema.optional(Schema.String)
    }))
  })),
  /**
   * The fleet this host belongs to (docs/cluster.md, "Running a fleet"): its database's URL, this
   * host's name in it, where its runner is reached. `city daemon` and `city fleet` use them when
   * their `--cluster*` flags are not given.
   */
  cluster: Schema.optional(Schema.Struct({
    url: Schema.String.pipe(Schema.minLength(1, { message: () => "must be the fleet's database URL" })),
    host: Schema.optional(Name),
    address: Schema.optional(Schema.String)
  }))
}).pipe(
  Schema.filter((host) => {
    const both = host.agent_runtimes.filter((r) => host.channel_runtimes.includes(r))
    return both.length === 0 ||
      { path: ["channel_runtimes"], message: `${both[0]} cannot be both an agent and a channel runtime` }
  })
)
/**
 * `host.json`: which runtimes are agents and which are channels, and each runtime's profile.
 * @since 0.1.0
 * @category models
 */
export type HostConfig = typeof HostConfig.Type

/**
 * Claude, Codex and OpenCode are agent runtimes; OpenCode has a private directory.
 * @since 0.1.0
 * @category constants
 */
export const defaultHostConfig: HostConfig = {
  schema: 1,
  agent_runtimes: ["claude", "codex", "opencode"],
  channel_runtimes: ["telegram", "web"],
  profiles: { opencode: { private_dir: "state/opencode/{personality}" } }
}
