/**
 * The running workers of isolated plugins, for what operators look at (docs/plugin-loader.md,
 * "Isolation": `city plugins list`, `city status` and the status page show each plugin's isolation
 * and its worker's heap). A worker is listed from its plugin's start to its dispose; `heaps` reads
 * what each one last reported with its heartbeat (docs/plugin-loader.md, "Liveness"): a silent
 * worker, one whose event loop is stuck, reads as `None`.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Memory } from "../../schema/Isolation.ts"

/**
 * A worker's heap: V8's used bytes and its limit (the cap, plus what V8 keeps beside it).
 * @since 0.1.0
 * @category models
 */
export interface Heap {
  /** Bytes in use. */
  readonly used: number
  /** The most V8 lets the heap grow to, in bytes. */
  readonly limit: number
}

/**
 * One plugin's worker, as listed.
 * @since 0.1.0
 * @category models
 */
export interface WorkerHeap {
  /** The plugin whose worker it is. */
  readonly plugin: string
  /** `None` when the worker did not answer within a second. */
  readonly heap: Option.Option<Heap>
}

/**
 * The running workers of isolated plugins.
 * @since 0.1.0
 * @category tags
 */
export class Workers extends Context.Tag("effect-city/Workers")<Workers, {
  /** Lists `plugin`'s worker until the caller's Scope closes. */
  readonly add: (plugin: string, memory: Effect.Effect<Option.Option<Memory>>) => Effect.Effect<void, never, Scope.Scope>
  /** The heap of each listed worker, in plugin name order. */
  readonly heaps: Effect.Effect<ReadonlyArray<WorkerHeap>>
}>() {}

/**
 * Makes the list.
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Workers["Type"]> = Effect.sync(() => {
  const listed = new Map<string, Effect.Effect<Option.Option<Memory>>>()
  return {
    add: (plugin, heap) =>
      Effect.acquireRelease(Effect.sync(() => listed.set(plugin, heap)), () =>
        Effect.sync(() => {
          if (listed.get(plugin) === heap) listed.delete(plugin)
        })).pipe(Effect.asVoid),
    heaps: Effect.suspend(() =>
      Effect.forEach(
        [...listed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        ([plugin, memory]) =>
          Effect.map(memory, (read): WorkerHeap => ({ plugin, heap: Option.map(read, (m) => ({ used: m.heapUsed, limit: m.heapLimit })) })),
        { concurrency: "unbounded" }
      )
    )
  }
})

/**
 * The list as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Workers> = Layer.effect(Workers, make)
