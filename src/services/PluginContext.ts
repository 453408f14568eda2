/**
 * The per-call context (docs/city-plugin-lifecycle.md, "Call context": "City freshly projects a
 * PluginContext for every Action, Hook, System, and Availability call"). It is provided to every
 * handler as a service and never cached or shared between calls.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type { AgentInfo, SessionInfo, TurnInfo, WorkspaceInfo } from "../schema/HostModel.ts"

/**
 * What a handler sees of its call.
 * @since 0.1.0
 * @category models
 */
export interface PluginContextShape {
  /** The plugin whose handler is running. */
  readonly plugin: string
  /** The Agent the call is made for. */
  readonly agent: AgentInfo
  /** The project resource for the current call; not a plugin lifecycle boundary. */
  readonly workspace: WorkspaceInfo
  /** The Session, when the call belongs to one. */
  readonly session?: SessionInfo | undefined
  /** The Turn, when the call belongs to one. */
  readonly turn?: TurnInfo | undefined
}

/**
 * The per-call context as a service: `yield* PluginContext` inside a handler.
 * @since 0.1.0
 * @category tags
 */
export class PluginContext extends Context.Tag("effect-city/PluginContext")<PluginContext, PluginContextShape>() {}

