/**
 * The worker side of an isolated folder plugin (docs/plugin-loader.md, "Isolation"; the host side
 * is services/isolation/WorkerPlugin.ts): in its own worker
 * thread, it admits the plugin folder for host-provided modules, imports the entry, runs the
 * plugin's initialize in a Scope it keeps until `Dispose`, and answers the host's calls with the
 * plugin's contributions. The plugin's own requests to the host (a log line, a reload request, a
 * sibling call) are queued as items of the `HostCalls` stream the host opened, and wait for the
 * host's `HostAnswer`.
 *
 * What the plugin contributes stays here; the host gets its shape (action names, hook counts,
 * whether it has system text or an availability check, its skills). An action's input is decoded
 * here with the action's own Schema, so the host's proxy takes any input. What cannot cross is
 * refused at initialize (services provided to siblings: a Context cannot leave its thread) or
 * fails the call that tried (a result that cannot be cloned), each with `IsolatedFailure`. An
 * action implemented from a reference with `output` / `error` Schemas answers encoded with them
 * (its result, and a failure its `error` Schema accepts), for the host to decode with the caller's
 * reference; a result its `output` Schema refuses fails the call with `ActionOutputRejected` here.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { WorkerError } from "@effect/platform/WorkerError"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as v8 from "node:v8"
import { ActionOutputRejected, ReloadRejected } from "../../../schema/Errors.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { issueLine } from "../../../schema/ParseIssue.ts"
import type { AnyAction, Contributions, Hook } from "../../Contributions.ts"
import { PluginContext, type PluginContextShape } from "../../PluginContext.ts"
import * as PluginLifecycleContext from "../../PluginLifecycleContext.ts"
import { Siblings, SiblingViews } from "../../Siblings.ts"
import { shapeOf } from "../Entry.ts"
import { HostModules } from "../HostModules.ts"
import * as ResolveHook from "./resolveHook.ts"
import { fromRegister } from "../Staging.ts"

type CallContext = typeof Isolation.CallContext.Type
type ActionResult = typeof Isolation.ActionResult.Type

/** A failure of the plugin, as data that crosses (its tag, message and own plain fields). */
const toFailure = (plugin: string, what: string, cause: Cause.Cause<unknown>): Isolation.IsolatedFailure => {
  const error = Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))
  const facts = Isolation.errorFacts(error)
  const fields: Record<string, unknown> = {}
  if (typeof error === "object" && error !== null) {
    for (const [key, value] of Object.entries(error)) {
      if (key === "_tag" || typeof value === "function") continue
      try {
        fields[key] = structuredClone(value)
      } catch {
        // A field that cannot cross is left out; the message still says what failed.
      }
    }
  }
  return new Isolation.IsolatedFailure({
    plugin,
    what,
    ...facts,
    ...(Object.keys(fields).length === 0 ? {} : { fields })
  })
}

/** A value that cannot be structured-cloned fails the call here, naming what, before the runner tries to send it. */
const crossable = (plugin: string, what: string) => (value: unknown): Effect.Effect<unknown, Isolation.IsolatedFailure> => {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return Effect.succeed(value)
  try {
    structuredClone(value)
    return Effect.succeed(value)
  } catch (error) {
    return Effect.fail(
      new Isolation.IsolatedFailure({
        plugin,
        what,
        reason: `its result cannot cross to the host (${error instanceof Error ? error.message : String(error)})`
      })
    )
  }
}

const contextOf = (data: CallContext): PluginContextShape => data

/** What initialize left: the Scope the plugin's resources live in and what it contributes. */
interface Running {
  readonly name: string
  readonly scope: Scope.CloseableScope
  readonly contributions: Contributions
}

/**
 * The handlers of the protocol, and the logger that sends the plugin's log lines to the host.
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, WorkerError, WorkerRunner.PlatformRunner | FileSystem.FileSystem> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const calls = yield* Queue.unbounded<Isolation.HostCall>()
    const pending = new Map<number, Deferred.Deferred<unknown, Isolation.IsolatedFailure>>()
    let nextId = 0
    let running: Running | undefined
    let name = "?"

    /** One request of the plugin to the host, answered by `HostAnswer`. */
    const ask = (make: (id: number) => Isolation.HostCall) =>
      Effect.gen(function*() {
        const id = ++nextId
        const answer = yield* Deferred.make<unknown, Isolation.IsolatedFailure>()
        pending.set(id, answer)
        yield* Queue.offer(calls, make(id))
        return yield* Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => pending.delete(id))))
      })

    const invoke = (context: CallContext, plugin: string, action: string, input: unknown) =>
      ask((id) => ({ _tag: "Invoke", id, context, plugin, action, input }))

    const forward = Logger.make(({ logLevel, message }) => {
      const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
      const level = logLevel._tag === "Debug" || logLevel._tag === "Trace"
        ? "debug"
        : logLevel._tag === "Info"
        ? "info"
        : logLevel._tag === "Warning"
        ? "warn"
        : "error"
      // unsafe: a logger runs synchronously inside the logging fiber, where no Effect can run; the
      // queue is unbounded, so the offer always succeeds at once.
      Queue.unsafeOffer(calls, { _tag: "Log", level, message: text })
    })

    const running_ = (what: string) =>
      running === undefined
        ? Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what, reason: "the plugin is not initialized" }))
        : Effect.succeed(running)

    const initialize = (request: Isolation.Initialize) =>
      Effect.gen(function*() {
        name = request.name
        if (running !== undefined) {
          return yield* Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what: "initialize", reason: "already initialized" }))
        }
        yield* ResolveHook.admit(request.folder)
        const module = yield* Effect.tryPromise({
          try: () => import(request.url),
          catch: (error) => toFailure(name, "import", Cause.fail(error))
        })
        const shape = yield* Effect.mapError(shapeOf(module, request.name, request.url), (e) => toFailure(name, "import", Cause.fail(e)))
        const scope = yield* Scope.make()
        const lifecycle = PluginLifecycleContext.make({
          name,
          version: request.version,
          storage: { path: request.storagePath },
          scope,
          requestReload: (change) =>
            Effect.flatMap(Effect.serviceOption(PluginContext), (call) =>
              ask((id) => ({
                _tag: "RequestReload",
                id,
                change,
                ...(Option.isSome(call) ? { context: { ...call.value } } : {})
              })).pipe(
                Effect.asVoid,
                Effect.catchAll((failure) =>
                  Effect.fail(new ReloadRejected({ plugin: name, mode: change.mode, reason: failure.reason }))
                )
              )),
          config: { values: request.config, unset: request.configUnset }
        })
        const plugin = shape._tag === "Plugin"
          ? shape.plugin.initialize.pipe(
            Effect.provideService(Siblings, {
              invoke: (plugin, action, input) =>
                Effect.flatMap(PluginContext, (ctx) => invoke({ ...ctx }, plugin, action, input))
            })
          )
          : fromRegister({
            name,
            version: request.version,
            register: shape.register,
            extras: { prompt: undefined, skills: undefined },
            invoke: (base, plugin, action, input) => invoke({ plugin: name, ...base }, plugin, action, input)
          }).initialize
        const contributions = yield* plugin.pipe(
          Effect.provideService(PluginLifecycleContext.PluginLifecycleContext, lifecycle),
          // A sibling's service is an object of the host's thread: from here none is reachable
          // (`use` fails with SiblingUnavailable); sibling actions are, through the host.
          Effect.provideService(SiblingViews, { lease: () => ({ provider: () => Option.none(), release: () => undefined }) }),
          Scope.extend(scope),
          Effect.catchAllCause((cause) =>
            Effect.zipRight(Effect.ignore(Scope.close(scope, Exit.failCause(cause))), Effect.fail(toFailure(name, "initialize", cause)))
          )
        )
        if (contributions.services !== undefined) {
          yield* Effect.ignore(Scope.close(scope, Exit.void))
          return yield* Effect.fail(
            new Isolation.IsolatedFailure({
              plugin: name,
              what: "initialize",
              reason: "it provides services to its siblings, and a service cannot leave its worker thread: load it with isolation \"none\""
            })
          )
        }
        running = { name, scope, contributions }
        const hooks: Record<string, number> = {}
        for (const [point, handlers] of Object.entries(contributions.hooks ?? {})) {
          hooks[point] = Array.isArray(handlers) ? handlers.length : 1
        }
        return {
          actions: Object.keys(contributions.actions ?? {}),
          hooks,
          system: contributions.system !== undefined,
          availability: contributions.availability !== undefined,
          ...(contributions.skills === undefined ? {} : { skills: contributions.skills })
        }
      })

    const callAction = (request: Isolation.CallAction) =>
      Effect.gen(function*() {
        const { contributions } = yield* running_(`action ${request.action}`)
        const what = `action ${request.action}`
        const action: AnyAction | undefined = contributions.actions?.[request.action]
        if (action === undefined) {
          return yield* Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what, reason: "no such action" }))
        }
        const input = yield* Schema.decodeUnknown(action.input)(request.input).pipe(
          Effect.mapError((error) => new Isolation.IsolatedFailure({ plugin: name, what, errorTag: "ParseError", reason: error.message }))
        )
        return yield* action.handler(input as never).pipe(
          Effect.provideService(PluginContext, contextOf(request.context)),
          Effect.matchCauseEffect({
            onFailure: (cause): Effect.Effect<never, Isolation.ActionError | Isolation.IsolatedFailure> =>
              Effect.fail(declaredFailure(action, request.action, cause) ?? toFailure(name, what, cause)),
            onSuccess: (value) => resultOf(action, request.action, value)
          }),
          Effect.flatMap(({ _tag, value }) => Effect.map(crossable(name, what)(value), (value) => ({ _tag, value })))
        )
      })

    /**
     * A failure the action's `error` Schema accepts, encoded with it (a Cause with a defect or an
     * interruption is not one, nor a failure the Schema would not encode).
     */
    const declaredFailure = (action: AnyAction, actionName: string, cause: Cause.Cause<unknown>): Isolation.ActionError | undefined => {
      const schema = action.error
      if (schema === undefined || Cause.isDie(cause) || Cause.isInterrupted(cause)) return undefined
      const failure = Cause.failureOption(cause)
      if (Option.isNone(failure) || !Schema.is(schema)(failure.value)) return undefined
      const encoded = Schema.encodeEither(schema)(failure.value)
      return Either.isRight(encoded) ? new Isolation.ActionError({ plugin: name, action: actionName, error: encoded.right }) : undefined
    }

    /** The handler's result as it crosses: encoded with the action's `output` Schema when it has one. */
    const resultOf = (action: AnyAction, actionName: string, value: unknown): Effect.Effect<ActionResult, ActionOutputRejected> =>
      action.output === undefined
        ? Effect.succeed({ _tag: "Returned", value })
        : Schema.encode(action.output)(value).pipe(
          Effect.map((encoded): ActionResult => ({ _tag: "Encoded", value: encoded })),
          Effect.mapError((error) => new ActionOutputRejected({ plugin: name, action: actionName, issue: issueLine(error) }))
        )

    const callHook = (request: Isolation.CallHook) =>
      Effect.gen(function*() {
        const { contributions } = yield* running_(`hook ${request.point}`)
        const what = `hook ${request.point}`
        const at = contributions.hooks?.[request.point]
        const handler: Hook | undefined = Array.isArray(at) ? at[request.index] : request.index === 0 ? (at as Hook | undefined) : undefined
        if (handler === undefined) {
          return yield* Effect.fail(new Isolation.IsolatedFailure({ plugin: name, what, reason: `no handler #${request.index + 1}` }))
        }
        return yield* handler(request.value).pipe(
          Effect.provideService(PluginContext, contextOf(request.context)),
          Effect.catchAllCause((cause) => Effect.fail(toFailure(name, what, cause))),
          Effect.flatMap(crossable(name, what))
        )
      })

    const callSystem = (request: Isolation.CallSystem) =>
      Effect.gen(function*() {
        const { contributions } = yield* running_("system")
        const system = contributions.system
        if (system === undefined) return null
        const context = contextOf(request.context)
        const text = yield* system(context).pipe(
          Effect.provideService(PluginContext, context),
          Effect.catchAllCause((cause) => Effect.fail(toFailure(name, "system", cause)))
        )
        return text ?? null
      })

    const callAvailability = (request: Isolation.CallAvailability) =>
      Effect.gen(function*() {
        const { contributions } = yield* running_("availability")
        const check = contributions.availability
        if (check === undefined) return { available: true, reasons: [] }
        const context = contextOf(request.context)
        return yield* check(context).pipe(
          Effect.provideService(PluginContext, context),
          Effect.catchAllCause((cause) => Effect.fail(toFailure(name, "availability", cause)))
        )
      })

    const dispose = Effect.suspend(() => {
      const current = running
      if (current === undefined) return Effect.void
      running = undefined
      return Scope.close(current.scope, Exit.void).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.fail(toFailure(name, "dispose", exit.cause))
        )
      )
    })

    const heap = Effect.sync(() => {
      const stats = v8.getHeapStatistics()
      return { used: stats.used_heap_size, limit: stats.heap_size_limit }
    })

    const answer = (request: Isolation.HostAnswer) =>
      Effect.suspend(() => {
        const waiting = pending.get(request.id)
        if (waiting === undefined) return Effect.void
        const outcome = request.outcome
        return Deferred.complete(
          waiting,
          outcome._tag === "Succeeded"
            ? Effect.succeed(outcome.value)
            : Effect.fail(
              new Isolation.IsolatedFailure({
                plugin: name,
                what: "a request to the host",
                ...(outcome.errorTag === undefined ? {} : { errorTag: outcome.errorTag }),
                reason: outcome.reason
              })
            )
        )
      })

    return WorkerRunner.layerSerialized(Isolation.Request, {
      Initialize: initialize,
      CallAction: callAction,
      CallHook: callHook,
      CallSystem: callSystem,
      CallAvailability: callAvailability,
      Dispose: () => dispose,
      Heap: () => heap,
      Ping: () => Effect.void,
      HostCalls: () => Stream.fromQueue(calls),
      HostAnswer: answer
    }).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, forward)))
  })
).pipe(Layer.provide(Layer.succeed(HostModules, {
  resolveFrom: import.meta.url,
  plugin: new URL("city-plugin.mjs", import.meta.url).href
})))
