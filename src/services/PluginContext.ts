/**
 * The per-call context (spec/city-plugin-lifecycle.md, "Call context": "City freshly projects a
 * PluginContext for every Action, Hook, System, and Availability call"). It is provided to every
 * handler as a service and never cached or shared between calls.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type { Agent, Session, Turn } from "./Sessions.ts"
import type { Workspace } from "./Workspaces.ts"

export interface PluginContextShape {
  /** The plugin whose handler is running. */
  readonly plugin: string
  readonly agent: Agent
  /** The project resource for the current call; not a plugin lifecycle boundary. */
  readonly workspace: Workspace
  readonly session?: Session | undefined
  readonly turn?: Turn | undefined
}

export class PluginContext extends Context.Tag("effect-city/PluginContext")<PluginContext, PluginContextShape>() {}

/** The call-independent part of a PluginContext: who is calling, from where. */
export interface CallBase {
  readonly agent: Agent
  readonly workspace: Workspace
  readonly session?: Session | undefined
  readonly turn?: Turn | undefined
}

/** A fresh PluginContext object for one call. */
export const project = (plugin: string, base: CallBase): PluginContextShape => ({
  plugin,
  agent: base.agent,
  workspace: base.workspace,
  session: base.session,
  turn: base.turn
})
