/**
 * A plugin in a worker thread of its own (docs/plugin-loader.md, "Isolation"; docs/design.md,
 * "Third-party plugins": "Isolation is a resource"): the worker is the plugin's resource.
 * Initialize starts the worker (`@effect/platform-node`'s NodeWorker under `@effect/platform`'s
 * serialized Worker) and runs the plugin's own initialize there; dispose runs its dispose there,
 * then ends the thread. The host holds proxies: each action, hook, system text and availability
 * check is a request to the worker, with the call's PluginContext as data.
 *
 * Containment (what the host's own thread cannot do for a plugin in it):
 * - **A spin at initialize or dispose** is ended at the registry's timeout: closing the plugin's
 *   Scope terminates the thread, whether or not its event loop turns.
 * - **A spinning call** fails with `IsolatedCallTimedOut` at the per-call timeout: once a call has
 *   run over it and the worker does not answer a ping within a second, its event loop is stuck and
 *   the thread is ended (the plugin leaves the City as below). A call that waits while its worker
 *   answers is not cut, as a call in the host's thread is not.
 * - **A heap cap** (`resourceLimits.maxOldGenerationSizeMb`, {@link defaultLimits}): a leak ends
 *   the worker with Node's out-of-memory error, never the host.
 * - **`process.exit()` or an uncaught throw** in the plugin ends its worker thread only.
 * When the worker of a ready plugin ends on its own, the plugin tells the City through its
 * PluginLiveness: it leaves the City with an error snapshot saying why (its running calls fail
 * with `WorkerEnded`); a retry starts a fresh worker.
 * @since 0.1.0
 */
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as Worker from "@effect/platform/Worker"
import type { WorkerError } from "@effect/platform/WorkerError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Worker as Thread } from "node:worker_threads"
import type { ActionOutputRejected } from "../../schema/Errors.ts"
import type { CallBase } from "../../schema/HostModel.ts"
import * as Isolation from "../../schema/Isolation.ts"
import type { AnyAction, Contributions, Hook } from "../Contributions.ts"
import { Encoded, Refused } from "../internal/encoded.ts"
import { make as makePlugin, type Plugin, type RequirementInput } from "../Plugin.ts"
import { PluginContext, type PluginContextShape } from "../PluginContext.ts"
import { PluginLifecycleContext } from "../PluginLifecycleContext.ts"
import { PluginLiveness } from "../city/PluginLiveness.ts"
import { Workers } from "./Workers.ts"
import { WorkerScript } from "./WorkerScript.ts"

/**
 * The limits of one isolated plugin.
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** The worker's heap cap (V8's old generation), in MiB. */
  readonly heapMb: number
  /** How long one call (action, hook, system, availability) may run. */
  readonly callTimeout: Duration.DurationInput
  /** How long the plugin's dispose may run in the worker before the thread is ended anyway. */
  readonly disposeTimeout: Duration.DurationInput
}

/**
 * The default limits: a 256 MiB heap (a worker at rest uses about 30 MiB, Effect and the platform
 * loaded in it: the rest is the plugin's), calls of at most 30 seconds, a dispose of at most 10
 * seconds (the registry's default).
 * @since 0.1.0
 * @category constants
 */
export const defaultLimits: Limits = { heapMb: 256, callTimeout: "30 seconds", disposeTimeout: "10 seconds" }

/** How long a worker has to answer a ping after a call ran over its timeout. */
const pingTimeout = Duration.seconds(1)

/**
 * What the worker-isolated plugin is made from.
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The plugin's name (the entry's Plugin, if it exports one, must carry it). */
  readonly name: string
  /** Its version. */
  readonly version: string
  /** The plugins it needs, as `Plugin.make` takes them. */
  readonly requires?: ReadonlyArray<RequirementInput> | undefined
  /** The entry's import URL. */
  readonly url: string
  /** The plugin folder (admitted for host-provided modules in the worker). */
  readonly folder: string
  /** Its heap cap and timeouts (see {@link defaultLimits}). */
  readonly limits: Limits
  /** A sibling's action, for the plugin's `invoke` (resolved at the time of the call). */
  readonly invoke: (base: CallBase, plugin: string, action: string, input: unknown) => Effect.Effect<unknown, unknown>
}

/** Why a thread ended, in words, from its exit code and the last error it emitted. */
const endReason = (code: number, error: unknown, heapMb: number): string => {
  if (typeof error === "string") return error
  if (error instanceof Error) {
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") return `it ran out of memory (heap cap ${heapMb} MiB)`
    return `uncaught ${error.name}: ${error.message}`
  }
  return `it exited with code ${code}`
}

const contextData = (ctx: PluginContextShape): typeof Isolation.CallContext.Type => ({
  plugin: ctx.plugin,
  agent: ctx.agent,
  workspace: ctx.workspace,
  session: ctx.session,
  turn: ctx.turn
})

/** The host's answer to one request of the plugin: a value that can cross, or the failure's tag and reason. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>): typeof Isolation.HostAnswer.fields.outcome.Type => {
  if (Exit.isSuccess(exit)) {
    try {
      structuredClone(exit.value)
      return { _tag: "Succeeded", value: exit.value }
    } catch (error) {
      return { _tag: "Failed", reason: `the result cannot cross to the worker (${error instanceof Error ? error.message : String(error)})` }
    }
  }
  return { _tag: "Failed", ...Isolation.errorFacts(Cause.squash(exit.cause)) }
}

/**
 * A Plugin whose code runs in a worker thread of its own.
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Plugin<Isolation.IsolatedFailure | Isolation.WorkerEnded> => {
  const { name } = options
  const heapMb = options.limits.heapMb
  const callTimeout = Duration.decode(options.limits.callTimeout)
  const disposeTimeout = Duration.decode(options.limits.disposeTimeout)
  return makePlugin({
    name,
    version: options.version,
    requires: options.requires,
    initialize: Effect.gen(function*() {
      const lifecycle = yield* PluginLifecycleContext
      const script = yield* WorkerScript
      const ended = yield* Deferred.make<string>()
      let thread: Thread | undefined
      let lastError: unknown
      let initialized = false
      let closing = false

      const spawn = () => {
        const worker = new Thread(new URL(script.url), { resourceLimits: { maxOldGenerationSizeMb: heapMb } })
        worker.on("error", (error) => {
          lastError ??= error
        })
        worker.on("exit", (code) => {
          // unsafe: a Node event listener, outside any fiber, where no Effect can run.
          Deferred.unsafeDone(ended, Exit.succeed(endReason(code, lastError, heapMb)))
        })
        thread = worker
        return worker
      }
      const stop = (reason?: string) =>
        Effect.promise(async () => {
          if (reason !== undefined) lastError ??= reason
          await thread?.terminate()
        })

      const worker = yield* Worker.makeSerialized<Isolation.Request>({}).pipe(
        Effect.provide(NodeWorker.layer(spawn)),
        Effect.mapError((error) => new Isolation.WorkerEnded({ plugin: name, reason: `it could not start: ${error.message}` }))
      )
      /** Why the worker is gone, once it is. */
      const gone = Deferred.await(ended)
      const failed = (error: WorkerError | ParseResult.ParseError, what: string) =>
        error._tag === "ParseError"
          ? Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what, reason: error.message }))
          : Effect.flatMap(Effect.timeoutTo(gone, { duration: "1 second", onSuccess: (r) => r, onTimeout: () => error.message }), (reason) =>
            Effect.fail(new Isolation.WorkerEnded({ plugin: name, reason })))

      // Dispose: the plugin's own, in the worker (bounded), then the thread ends. Added after the
      // Worker, so it runs before the platform's close (which waits 5 s for a thread that may spin).
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          closing = true
          const alive = !(yield* Deferred.isDone(ended))
          const disposed = initialized && alive
            ? yield* worker.executeEffect(new Isolation.Dispose()).pipe(
              // A finalizer runs uninterruptibly: the wait must be interruptible for the timeout to end it.
              Effect.interruptible,
              Effect.timeoutFail({
                duration: disposeTimeout,
                onTimeout: () => new Isolation.IsolatedFailure({ plugin: name, what: "dispose", reason: `did not end within ${Duration.toMillis(disposeTimeout)} ms; the worker was ended` })
              }),
              Effect.exit
            )
            : Exit.void
          yield* stop()
          if (Exit.isFailure(disposed)) return yield* Effect.die(Cause.squash(disposed.cause))
        })
      )

      // The plugin's requests to the host: log lines, reload requests, sibling calls.
      const fibers = yield* FiberSet.make()
      const answer = (id: number, exit: Exit.Exit<unknown, unknown>) =>
        Effect.ignore(worker.executeEffect(new Isolation.HostAnswer({ id, outcome: outcomeOf(exit) })))
      const serve = (call: Isolation.HostCall): Effect.Effect<void> => {
        switch (call._tag) {
          case "Log":
            return lifecycle.log[call.level](call.message)
          case "RequestReload": {
            const request = lifecycle.requestReload(call.change)
            const withCall = call.context === undefined ? request : Effect.provideService(request, PluginContext, call.context)
            return Effect.flatMap(Effect.exit(withCall), (exit) => answer(call.id, exit))
          }
          case "Invoke":
            return Effect.flatMap(
              Effect.exit(options.invoke(call.context, call.plugin, call.action, call.input)),
              (exit) => answer(call.id, exit)
            )
        }
      }
      yield* worker.execute(new Isolation.HostCalls()).pipe(
        Stream.runForEach((call) => FiberSet.run(fibers, serve(call))),
        Effect.ignore,
        Effect.forkScoped
      )

      // The per-call timeout, kept by one watchdog rather than a timer per call (a timeout per call
      // cost more than the rest of the call's host side): the calls in flight are listed with their
      // start, and when the oldest has run over the timeout and the worker does not answer a ping,
      // its event loop is stuck and the thread is ended; the calls it cut fail with
      // IsolatedCallTimedOut. A call that waits (for the network, say) while the worker answers is
      // not cut, as a call in the host's own thread is not.
      const inFlight = new Set<{ readonly at: number; readonly what: string }>()
      let stuck = false
      const callMillis = Duration.toMillis(callTimeout)
      /** A request to the worker, in flight until it ends; the platform's failures become the plugin's. */
      const call = <A, E extends Isolation.IsolatedFailure | Isolation.ActionError | ActionOutputRejected>(
        request: Effect.Effect<A, E | WorkerError | ParseResult.ParseError>,
        what: string
      ): Effect.Effect<A, E | Isolation.IsolatedFailure | Isolation.WorkerEnded | Isolation.IsolatedCallTimedOut> =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const entry = { at, what }
          inFlight.add(entry)
          return request.pipe(
            Effect.ensuring(Effect.sync(() => inFlight.delete(entry))),
            Effect.catchAll((e): Effect.Effect<never, E | Isolation.IsolatedFailure | Isolation.WorkerEnded | Isolation.IsolatedCallTimedOut> => {
              if (e._tag === "WorkerError") {
                return stuck ? Effect.fail(new Isolation.IsolatedCallTimedOut({ plugin: name, what, millis: callMillis })) : failed(e as WorkerError, what)
              }
              return e._tag === "ParseError" ? failed(e as ParseResult.ParseError, what) : Effect.fail(e as E)
            })
          )
        })
      const watchdog = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let oldest: { readonly at: number; readonly what: string } | undefined
        for (const entry of inFlight) {
          if (now - entry.at >= callMillis && (oldest === undefined || entry.at < oldest.at)) oldest = entry
        }
        if (oldest === undefined || stuck) return
        const answers = yield* worker.executeEffect(new Isolation.Ping()).pipe(Effect.timeout(pingTimeout), Effect.isSuccess)
        if (answers) return
        stuck = true
        yield* stop(
          `it stopped answering: ${oldest.what} ran over ${callMillis} ms and the worker did not answer within ${Duration.toMillis(pingTimeout)} ms more`
        )
      })

      const shape = yield* worker.executeEffect(
        new Isolation.Initialize({
          url: options.url,
          folder: options.folder,
          name,
          version: options.version,
          storagePath: lifecycle.storage.path,
          config: { ...lifecycle.config },
          configUnset: [...lifecycle.configUnset]
        })
      ).pipe(Effect.catchTags({ WorkerError: (e) => failed(e, "initialize"), ParseError: (e) => failed(e, "initialize") }))
      initialized = true
      yield* Effect.forkScoped(Effect.repeat(watchdog, Schedule.spaced(Duration.millis(Math.max(10, Math.min(1000, callMillis / 2))))))
      const workers = yield* Effect.serviceOption(Workers)
      if (Option.isSome(workers)) yield* workers.value.add(name, worker.executeEffect(new Isolation.Heap()))

      // A worker that ends on its own takes the plugin out of the City (PluginLiveness, in a fiber
      // of its own: it disposes this plugin, whose Scope holds this watcher).
      const liveness = yield* Effect.serviceOption(PluginLiveness)
      yield* gone.pipe(
        Effect.flatMap((reason) =>
          closing || Option.isNone(liveness)
            ? Effect.void
            : Effect.asVoid(Effect.forkDaemon(liveness.value.lost(`its worker ended: ${reason}`)))
        ),
        Effect.forkScoped
      )

      const context = Effect.map(PluginContext, contextData)
      const actions: Record<string, AnyAction> = {}
      for (const action of shape.actions) {
        actions[action] = {
          input: Schema.Unknown,
          handler: (input: never) =>
            Effect.flatMap(context, (ctx) => call(worker.executeEffect(new Isolation.CallAction({ action, input, context: ctx })), `action ${action}`)).pipe(
              // What crossed encoded is marked so, for the caller's reference to decode (Calls.ts).
              Effect.map((result) => result._tag === "Encoded" ? new Encoded(result.value) : result.value),
              Effect.catchTags({
                IsolatedActionError: (e) => Effect.fail(new Encoded(e.error)),
                ActionOutputRejected: (e) => Effect.fail(new Refused(e))
              })
            )
        }
      }
      const hooks: Record<string, ReadonlyArray<Hook>> = {}
      for (const [point, count] of Object.entries(shape.hooks)) {
        hooks[point] = Array.from({ length: count }, (_, index): Hook => (value) =>
          Effect.flatMap(context, (ctx) => call(worker.executeEffect(new Isolation.CallHook({ point, index, value, context: ctx })), `hook ${point}`)))
      }
      const contributions: Contributions = {
        actions,
        hooks,
        system: shape.system
          ? (ctx) => Effect.map(call(worker.executeEffect(new Isolation.CallSystem({ context: contextData(ctx) })), "system"), (text) => text ?? undefined)
          : undefined,
        availability: shape.availability
          ? (ctx) => call(worker.executeEffect(new Isolation.CallAvailability({ context: contextData(ctx) })), "availability")
          : undefined,
        skills: shape.skills
      }
      return contributions
    })
  })
}
