/**
 * The host model as a plugin sees it (docs/city-plugin-lifecycle.md, "Call context": "Its agent,
 * workspace, and optional session/turn handles can be used directly"): plain data naming who is
 * calling and from where. The City's own Agent, Workspace, Session and Turn services carry these
 * fields (and behaviour a plugin has no business with); a PluginContext exposes only this part.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * An Agent, by id.
 * @since 0.1.0
 * @category models
 */
export const AgentInfo = Schema.Struct({ id: Schema.String })
/**
 * An Agent, by id.
 * @since 0.1.0
 * @category models
 */
export interface AgentInfo extends Schema.Schema.Type<typeof AgentInfo> {}

/**
 * A Workspace: the project resource of the current call, by id and path on disk.
 * @since 0.1.0
 * @category models
 */
export const WorkspaceInfo = Schema.Struct({ id: Schema.String, path: Schema.String })
/**
 * A Workspace, by id and path on disk.
 * @since 0.1.0
 * @category models
 */
export interface WorkspaceInfo extends Schema.Schema.Type<typeof WorkspaceInfo> {}

/**
 * A Session, by id.
 * @since 0.1.0
 * @category models
 */
export const SessionInfo = Schema.Struct({ id: Schema.String })
/**
 * A Session, by id.
 * @since 0.1.0
 * @category models
 */
export interface SessionInfo extends Schema.Schema.Type<typeof SessionInfo> {}

/**
 * A Turn of a Session, by its number (1, 2, … within the Session).
 * @since 0.1.0
 * @category models
 */
export const TurnInfo = Schema.Struct({ number: Schema.Number })
/**
 * A Turn of a Session, by its number.
 * @since 0.1.0
 * @category models
 */
export interface TurnInfo extends Schema.Schema.Type<typeof TurnInfo> {}

/**
 * Who is calling, from where: the call-independent part of a PluginContext.
 * @since 0.1.0
 * @category models
 */
export interface CallBase {
  /** The Agent the call is made for. */
  readonly agent: AgentInfo
  /** The Workspace the call runs in. */
  readonly workspace: WorkspaceInfo
  /** The Session, when the call belongs to one. */
  readonly session?: SessionInfo | undefined
  /** The Turn, when the call belongs to one. */
  readonly turn?: TurnInfo | undefined
}
