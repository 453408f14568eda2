/**
 * One plugin under test (docs/library.md, "Testing"): the plugin runs in a City of its own, and
 * the harness calls it as that City would, with a made-up caller.
 *
 * Decisions:
 * - **The City's own paths, not a copy of them.** `make` builds the City core on a test root
 *   (`CityTest.tempRoot`, removed when the Scope closes; `CityTest.defaults` deadlines) and adds the
 *   plugin with `city.plugins.add`: initialize is bounded, runs in the plugin's own Scope with its
 *   `PluginLifecycleContext`, and a failure is `add`'s: the plugin's own typed failure itself,
 *   else `PluginInitializeFailed`, which `make` fails with. Each call leases the City's
 *   view and runs the City's call code (`Calls.ts`): the input decoded with the action's Schema, a
 *   fresh `PluginContext`, `ActionFailed` / `HookFailed` for a failing handler, availability
 *   checked before system text. Only the view is narrowed to the plugin: `hook` runs its handlers
 *   alone, `system` gives its text alone, `invoke` by name names one of its actions.
 * - **The made-up caller.** Agent `test-agent`, Workspace `test-workspace` whose path is the
 *   folder `<root>/workspace` (made, so a plugin can read it), no Session, no Turn; `context`
 *   overrides any of them, and `withContext` gives the calls as another caller.
 * - **The lifecycle context** is the City's, with what a test may set: `config` (`ctx.config`,
 *   and `configUnset`) and `requestReload`. By default `requestReload` is recorded (`reloads`);
 *   a `reload` is applied as the loader applies it (the plugin's skills are replaced: `skills`
 *   shows them) and a `restart` is refused with `ReloadRejected` (a harness rebuilds nothing).
 * - **Siblings.** A plugin that needs others (`requires`, `Siblings.service`) gets them from
 *   `siblings`, started first as a City's optional start plugins are (a failing one is logged,
 *   and then the plugin fails with `PluginDependencyMissing` if it requires it).
 * - **Dispose, reported.** `dispose` removes the plugin as `city.plugins.remove` does (after
 *   the calls running on it, bounded by `disposeTimeout`); it runs once, later calls share its
 *   result. When the Scope closes, the plugin is disposed that way if it was not already, then
 *   the City closes, then the root is removed. `disposal` tells whether and how the dispose ended
 *   (`None` before it ran, else its `Exit`), also after the Scope has closed.
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import {
  type ActionRejected,
  type CityClosed,
  type HookFailed,
  type RegistryError,
  ReloadRejected
} from "../schema/Errors.ts"
import type { AgentInfo, CallBase, SessionInfo, TurnInfo, WorkspaceInfo } from "../schema/HostModel.ts"
import type { PluginChange, Skill } from "../schema/PluginChange.ts"
import type { PluginSnapshot } from "../schema/PluginSnapshot.ts"
import type { ActionRef, Availability } from "../services/Contributions.ts"
import type { Plugin } from "../services/Plugin.ts"
import type { PluginLifecycleContextShape } from "../services/PluginLifecycleContext.ts"
import type { SiblingNeed } from "../services/Siblings.ts"
import { BoundCalls } from "../services/city/Calls.ts"
import * as CityConfig from "../services/city/CityConfig.ts"
import * as CityRoot from "../services/root/CityRoot.ts"
import { ExecutionLeases } from "../services/city/internal/executionLeases.ts"
import { emptyPlugins, ExecutionView, instanceIn, withInstance } from "../services/city/ExecutionView.ts"
import { PluginRegistry } from "../services/city/internal/pluginRegistry.ts"
import * as StartPlugins from "../services/city/StartPlugins.ts"
import { core, fromCore } from "../services/city/internal/city.ts"
import * as CityTest from "./CityTest.ts"
import { withDeadlines } from "./internal/testDeadlines.ts"

/**
 * Who a harness's calls are made for: each field replaces the made-up one (agent `test-agent`,
 * workspace `test-workspace` in `<root>/workspace`, no session, no turn).
 * @since 0.1.0
 * @category models
 */
export interface HarnessContext {
  /** The Agent the calls are made for. */
  readonly agent?: AgentInfo | undefined
  /** The Workspace the calls run in. */
  readonly workspace?: WorkspaceInfo | undefined
  /** The Session the calls belong to. */
  readonly session?: SessionInfo | undefined
  /** The Turn the calls belong to. */
  readonly turn?: TurnInfo | undefined
}

/**
 * The options of `PluginHarness.make`: the City's (`root`, deadlines; see `CityTest`), the
 * made-up caller, the lifecycle context's settings, and the plugins it needs.
 * @since 0.1.0
 * @category models
 */
export interface HarnessOptions<RS = never> extends CityConfig.CityOptions {
  /** The City's state root; default: a temporary folder, removed when the Scope closes (`CityTest.tempRoot`). */
  readonly root?: string | undefined
  /** The caller of the harness's calls (see `HarnessContext`). */
  readonly context?: HarnessContext | undefined
  /** The plugin's settings, `ctx.config` of its lifecycle context (default: none). */
  readonly config?: Readonly<Record<string, unknown>> | undefined
  /** The keys of required settings that have no value, `ctx.configUnset` (default: none). */
  readonly configUnset?: ReadonlyArray<string> | undefined
  /** What the plugin's `ctx.requestReload` does, instead of the harness's (see the module doc). */
  readonly requestReload?: PluginLifecycleContextShape["requestReload"] | undefined
  /** The plugins it needs, started before it as optional start plugins of a City are. */
  readonly siblings?: ReadonlyArray<Plugin<unknown, RS>> | undefined
}

/**
 * Why a call failed: what `city.calls(...).invoke` fails with. After `dispose`, the plugin is
 * `PluginNotFound`.
 * @since 0.1.0
 * @category errors
 */
export type InvokeError = ActionRejected | CityClosed

/**
 * Why `make` failed: the plugin's initialize (its own typed failure `E` itself, as `add` fails;
 * `PluginInitializeFailed` when it died or timed out), a required plugin missing from `siblings`
 * (or siblings that require each other in a cycle), a bad or repeated name, or the test root
 * that could not be made.
 * @since 0.1.0
 * @category errors
 */
export type HarnessError<E> = E | RegistryError | PlatformError.PlatformError

/**
 * `invoke` on the plugin under test: by reference (typed, see `Contributions.reference`) or by
 * the action's name.
 * @since 0.1.0
 * @category models
 */
export interface HarnessInvoke {
  /** By reference: the input, the result and the action's own error typed, as `City.Invoke`. */
  <A, I, O, AE>(action: ActionRef<A, I, O, AE>, input: I): Effect.Effect<O, AE | ActionRejected | InvokeError>
  /** By name: checked at run time only (`ActionInputRejected`); the result is `unknown`. */
  (action: string, input: unknown): Effect.Effect<unknown, InvokeError>
}

/**
 * The plugin's contributions, called as the City calls them for one caller.
 * @since 0.1.0
 * @category models
 */
export interface PluginCalls {
  /** The caller these calls are made for. */
  readonly context: CallBase
  /** Calls one of the plugin's actions: the input decoded with its Schema, the handler run with a fresh PluginContext. */
  readonly invoke: HarnessInvoke
  /** Runs the plugin's handlers of a hook point as a waterfall: each gets the value the previous one returned. */
  readonly hook: (point: string, value: unknown) => Effect.Effect<unknown, HookFailed | CityClosed>
  /**
   * The plugin's system text, as the City puts it in: none when it is unavailable, has none or
   * gives an empty one, or when its `system` fails (the City logs that failure as a warning).
   */
  readonly system: () => Effect.Effect<Option.Option<string>, CityClosed>
  /** Whether the plugin can serve this caller; a failing check reads as unavailable with the reason. */
  readonly availability: () => Effect.Effect<Availability, ActionRejected | CityClosed>
}

/**
 * One plugin under test, ready: its calls, its skills and snapshot, and its dispose.
 * @since 0.1.0
 * @category models
 */
export interface PluginHarness extends PluginCalls {
  /** The plugin's name. */
  readonly name: string
  /** The City's state root (a temporary folder unless `root` was given). */
  readonly root: string
  /** The plugin's storage folder, `ctx.storage.path` (made the first time the plugin reads it). */
  readonly storage: string
  /** The same calls, made for another caller (each field given replaces this harness's). */
  readonly withContext: (context: HarnessContext) => PluginCalls
  /** The plugin's skills as the next Turn would see them (a `reload` request replaces them). */
  readonly skills: Effect.Effect<ReadonlyArray<Skill>, ActionRejected | CityClosed>
  /** The plugin's snapshot in the City (status, version, attempts, last error); `None` once disposed. */
  readonly snapshot: Effect.Effect<Option.Option<PluginSnapshot>>
  /** The changes the plugin asked for with `ctx.requestReload`, in order (with the harness's default `requestReload`). */
  readonly reloads: Effect.Effect<ReadonlyArray<PluginChange>>
  /**
   * Disposes the plugin now, as `city.plugins.remove` does: after the calls running on it, bounded
   * by `disposeTimeout`. It runs once; later calls (and the Scope's close) share its result.
   */
  readonly dispose: Effect.Effect<void, RegistryError>
  /** How the dispose ended: `None` while it has not run, else its Exit (readable after the Scope closed). */
  readonly disposal: Effect.Effect<Option.Option<Exit.Exit<void, RegistryError>>>
}

/**
 * Starts `plugin` in a City of its own for the current Scope and returns its harness; closing the
 * Scope disposes it (unless `dispose` did), closes the City and removes its temporary root.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Contributions, Plugin } from "effect-city/plugin"
 * import { PluginHarness } from "effect-city/testing"
 *
 * const echo = Plugin.make({
 *   name: "echo",
 *   initialize: Effect.succeed({
 *     actions: { say: Contributions.action({ input: Schema.Struct({ text: Schema.String }), handler: ({ text }) => Effect.succeed(text) }) }
 *   })
 * })
 *
 * const test = Effect.scoped(Effect.gen(function*() {
 *   const harness = yield* PluginHarness.make(echo)
 *   const said = yield* harness.invoke("say", { text: "hi" }) // "hi"
 *   yield* harness.dispose
 *   return [said, yield* harness.disposal] // [ "hi", Option.some(Exit.void) ]
 * }))
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = <E, R, RS = never>(
  plugin: Plugin<E, R>,
  options: HarnessOptions<RS> = {}
): Effect.Effect<PluginHarness, HarnessError<E>, Scope.Scope | Exclude<R | RS, SiblingNeed<any>>> =>
  Effect.gen(function*() {
    const outer = yield* Effect.scope
    // Everything the harness holds, in acquisition order: root, City, plugin. A failed start
    // releases it at once; a started harness releases it when the caller's Scope closes.
    const own = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    return yield* start(plugin, options, own).pipe(
      Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void))
    )
  })

const start = <E, R, RS>(plugin: Plugin<E, R>, options: HarnessOptions<RS>, own: Scope.CloseableScope) =>
  Effect.gen(function*() {
    const name = plugin.name
    const root = options.root ?? (yield* Scope.extend(CityTest.tempRoot, own))
    const workspacePath = path.join(root, "workspace")
    yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeDirectory(workspacePath, { recursive: true })).pipe(
      Effect.provide(NodeFileSystem.layer)
    )

    const config = CityConfig.layer({ root, ...withDeadlines(options), disposeConcurrency: options.disposeConcurrency })
    const { context } = yield* Scope.extend(fromCore(core(config.pipe(Layer.provide(NodeFileSystem.layer)))), own)
    const registry = Context.get(context, PluginRegistry)
    const leases = Context.get(context, ExecutionLeases)

    // A SiblingNeed is types only (nothing reads it from a context), as for a City's start plugins.
    const siblings = (options.siblings ?? []) as ReadonlyArray<Plugin<unknown, Exclude<RS, SiblingNeed<any>>>>
    yield* StartPlugins.check(siblings)
    yield* StartPlugins.start(registry, siblings).pipe(
      // Every sibling is optional: a failing one is isolated (logged), it never fails the start.
      Effect.catchTag("RegistryError", (error) => Effect.die(error))
    )

    const reloads = yield* Ref.make<ReadonlyArray<PluginChange>>([])
    const requestReload: PluginLifecycleContextShape["requestReload"] = options.requestReload ?? ((change) =>
      Effect.zipRight(
        Ref.update(reloads, (all) => [...all, change]),
        change.mode === "reload"
          ? Effect.mapError(registry.replaceSkills(name, change.skills), () =>
            new ReloadRejected({ plugin: name, mode: "reload", reason: "the plugin is not ready in this City" }))
          : Effect.fail(new ReloadRejected({ plugin: name, mode: "restart", reason: "a plugin harness does not restart plugins" }))
      ))
    yield* registry.add(plugin, {
      source: "harness",
      requestReload,
      config: { values: options.config ?? {}, unset: options.configUnset ?? [] }
    }).pipe(Effect.catchTag("CityClosed", (closed) => Effect.die(closed)))

    // The City's calls on a view narrowed to the plugin, under a lease on the whole view.
    const callsFor = (base: CallBase): PluginCalls => {
      const calls = <A, Err>(operation: string, f: (calls: BoundCalls) => Effect.Effect<A, Err>) =>
        leases.run(operation, (view) => {
          const instance = instanceIn(view, name)
          const only = new ExecutionView(view.version, instance === undefined ? emptyPlugins : withInstance(emptyPlugins, instance))
          return f(new BoundCalls(only, base, registry.explain))
        })
      return {
        context: base,
        invoke: ((target: string | ActionRef<unknown, unknown, unknown, unknown>, input: unknown) =>
          typeof target === "string"
            ? calls(`invoke ${name}/${target}`, (c) => c.invoke(name, target, input))
            // A reference to another plugin's action names a plugin this harness does not hold.
            : calls(`invoke ${target.plugin}/${target.action}`, (c) => c.invoke(target, input))) as HarnessInvoke,
        hook: (point, value) => calls(`run hooks ${point}`, (c) => c.runHooks(point, value)),
        system: () =>
          calls("system", (c) => Effect.map(c.system(), (blocks) => Option.fromNullable(blocks.find((b) => b.name === name)?.content))),
        availability: () => calls(`availability of ${name}`, (c) => c.availability(name))
      }
    }
    const base: CallBase = {
      agent: options.context?.agent ?? { id: "test-agent" },
      workspace: options.context?.workspace ?? { id: "test-workspace", path: workspacePath },
      session: options.context?.session,
      turn: options.context?.turn
    }

    const disposal = yield* Ref.make(Option.none<Exit.Exit<void, RegistryError>>())
    const dispose = yield* Effect.cached(
      registry.remove(name).pipe(
        // Nothing requires it (siblings start before it) and the City is open until its finalizer.
        Effect.catchTags({
          RegistryError: (e) => e.reason === "PluginHasDependents" ? Effect.die(e) : Effect.fail(e),
          CityClosed: (e) => Effect.die(e)
        }),
        // A `pending` removal (asked from inside one of its own calls) ends with its disposal.
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: (removal) => removal.status === "pending" ? removal.disposal : Effect.void })),
        Effect.exit,
        Effect.tap((exit) => Ref.set(disposal, Option.some(exit))),
        Effect.flatten,
        Effect.uninterruptible
      )
    )
    // Before the City's close (finalizers run in reverse): the plugin's dispose is reported here.
    yield* Scope.addFinalizer(own, Effect.ignore(dispose))

    const harness: PluginHarness = {
      ...callsFor(base),
      name,
      root,
      storage: CityRoot.dataFolder(root, name),
      withContext: (context) =>
        callsFor({
          agent: context.agent ?? base.agent,
          workspace: context.workspace ?? base.workspace,
          session: context.session ?? base.session,
          turn: context.turn ?? base.turn
        }),
      skills: leases.run(`skills of ${name}`, (view) => {
        const instance = instanceIn(view, name)
        return instance === undefined ? Effect.fail(registry.explain(name)) : Effect.succeed(instance.contributions.skills ?? [])
      }),
      snapshot: registry.get(name),
      reloads: Ref.get(reloads),
      dispose,
      disposal: Ref.get(disposal)
    }
    return harness
  })
