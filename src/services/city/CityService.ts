/**
 * The City (docs/city-plugin-lifecycle.md: "City owns Plugins"): the service a host talks to.
 * `city.plugins` is the registry, `city.workspaces` and `city.agents` the host model,
 * `city.calls(...)` makes calls outside a Session, and `city.close` closes it all.
 * Build it with `City.layer(options)` (src/City.ts; its assembly is internal/city.ts).
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type {
  CityClosed,
  CityCloseError,
  HookFailed,
  ActionRejected
} from "../../schema/Errors.ts"
import type { CloseReport } from "../../schema/CloseReport.ts"
import type { CallBase } from "../../schema/HostModel.ts"
import type { ActionRef, Availability } from "../Contributions.ts"
import { BoundCalls, type Invoke, invokeArguments, type SystemBlock } from "./Calls.ts"
import type { ExecutionLeasesShape } from "./internal/executionLeases.ts"
import type { PluginRegistryShape } from "./internal/pluginRegistry.ts"
import type { AgentsShape } from "./Sessions.ts"
import type { WorkspacesShape } from "./Workspaces.ts"

/**
 * Calls outside a Session. Each call leases the current view for its own duration (a plugin
 * removed meanwhile is disposed after the call ends) and projects a fresh PluginContext.
 * @since 0.1.0
 * @category models
 */
export interface CityCalls {
  /**
   * Calls a plugin's action, by reference (typed: the input, the result and the action's own error,
   * see `Contributions.reference`) or by name (checked at run time only): see `City.Invoke`.
   */
  readonly invoke: Invoke<ActionRejected | CityClosed>
  /** Runs the handlers of a hook point as a waterfall, plugins in name order: each gets the value the previous one returned. */
  readonly runHooks: (point: string, value: unknown) => Effect.Effect<unknown, HookFailed | CityClosed>
  /** The system text of every available plugin that has some, in plugin name order. */
  readonly system: () => Effect.Effect<ReadonlyArray<SystemBlock>, CityClosed>
  /** Whether a plugin can serve this call. */
  readonly availability: (plugin: string) => Effect.Effect<Availability, ActionRejected | CityClosed>
}

/**
 * The City as a host sees it: its plugins, workspaces, agents, leases, calls outside a Session, and close.
 * @since 0.1.0
 * @category models
 */
export interface CityShape {
  /** The plugins: add, remove, get, snapshots and changes. */
  readonly plugins: Pick<PluginRegistryShape, "add" | "remove" | "get" | "snapshots" | "changes">
  /** The Workspaces the City holds. */
  readonly workspaces: WorkspacesShape
  /** The Agents and their Sessions. */
  readonly agents: AgentsShape
  /** Execution leases: the current plugin view, held for a Scope. */
  readonly leases: Pick<ExecutionLeasesShape, "acquire" | "acquireIn">
  /** Calls outside a Session, for the given caller (Agent, Workspace). */
  readonly calls: (base: CallBase) => CityCalls
  /**
   * Stops admission, stops Sessions (running Steps get `drainTimeout`), disposes every plugin,
   * releases Workspaces, and returns what it did: the `CloseReport` (the Sessions stopped, the
   * plugins disposed, the Workspaces released, the durations). Fails with CityCloseError, which
   * carries that same report, when a cleanup failed. It runs once: concurrent calls share that
   * run, and a later call returns the same result (the same report or failure) and runs nothing
   * again (docs/library.md, "Close runs once"). A caller that received the failure has handled
   * it: the City layer's Scope does not log it again.
   */
  readonly close: Effect.Effect<CloseReport, CityCloseError>
}

/**
 * The City as a service: `yield* City.City`, provided by `City.layer`.
 * @since 0.1.0
 * @category tags
 */
export class City extends Context.Tag("effect-city/City")<City, CityShape>() {}

/**
 * `city.calls(base)`: calls outside a Session, each under its own lease.
 * @since 0.1.0
 * @category constructors
 */
export const makeCalls = (
  registry: Pick<PluginRegistryShape, "explain">,
  leases: Pick<ExecutionLeasesShape, "run">
) =>
(base: CallBase): CityCalls => {
  const calls = <A, E>(operation: string, f: (calls: BoundCalls) => Effect.Effect<A, E>) =>
    leases.run(operation, (view) => f(new BoundCalls(view, base, registry.explain)))
  return {
    invoke: ((target: string | ActionRef<unknown, unknown, unknown, unknown>, second: unknown, third?: unknown) => {
      const [plugin, action] = invokeArguments(target, second, third)
      // The reference itself goes on: its Schemas decide the result and the typed failure.
      return calls(`invoke ${plugin}/${action}`, (c) =>
        typeof target === "string" ? c.invoke(target, second as string, third) : c.invoke(target, second))
    }) as CityCalls["invoke"],
    runHooks: (point, value) => calls(`run hooks ${point}`, (c) => c.runHooks(point, value)),
    system: () => calls("system", (c) => c.system()),
    availability: (plugin) => calls(`availability of ${plugin}`, (c) => c.availability(plugin))
  }
}
