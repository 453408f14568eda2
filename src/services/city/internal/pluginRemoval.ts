/**
 * Removing a plugin (docs/city-plugin-lifecycle.md, "Execution leases": "New Steps stop seeing a
 * removed Plugin immediately ... City calls dispose only after the final execution lease is
 * released").
 *
 * - `remove` takes the plugin out of the next execution view at once. If nothing holds it, it is
 *   disposed in the call: `disposed`. If the caller itself runs under a lease that covers it (an
 *   action removing another plugin, a host Step), it returns `pending` at once and the disposal
 *   follows when the last lease lets go (../LeasedDisposal.ts). An unknown name is `Option.none()`;
 *   clearing an error snapshot is `disposed`.
 * - A plugin others require is removed only with `cascade`: its dependents first, each before what
 *   it depends on (docs/library.md, "Plugin dependencies").
 * - `crashed`: a ready plugin that failed on its own leaves the view, is disposed after its last
 *   lease, and keeps an error snapshot, so a later `add` is a retry.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CityClosed, RegistryError } from "../../../schema/Errors.ts"
import * as Dependencies from "./dependencies.ts"
import { disposeAfterLeases, disposed, Removal } from "../LeasedDisposal.ts"
import type { Started } from "./pluginLifecycle.ts"
import type { RegistryParts, Restore } from "./registryParts.ts"

/**
 * The options of `city.plugins.remove`.
 * @since 0.1.0
 * @category models
 */
export interface RemoveOptions {
  /**
   * Removes the plugins that require this one first, dependents before what they depend on (each
   * disposal after its own leases); without it, a plugin others require is not removed
   * (`PluginHasDependents`).
   */
  readonly cascade?: boolean | undefined
}

/**
 * Makes `remove` and `crashed` on the registry's parts.
 * @since 0.1.0
 * @category constructors
 */
export const make = (parts: RegistryParts) => {
  const { closing, dependents, instances, leave, mutex, snapshots, views } = parts

  const removeStarted = (name: string, started: Started, restore: Restore) =>
    Effect.zipRight(
      Effect.suspend(() => {
        if (snapshots.statusOf(name) === "disposing") return Effect.void
        instances.hide(name)
        return snapshots.disposing(name)
      }),
      disposeAfterLeases({ started, dispose: Effect.ensuring(started.dispose, leave(name, started)), views, closing, restore })
    )

  const removeOne = (name: string, restore: Restore) =>
    Effect.suspend((): Effect.Effect<Option.Option<Removal>, RegistryError> => {
      const started = instances.get(name)
      if (started !== undefined) return Effect.map(removeStarted(name, started, restore), Option.some)
      if (snapshots.statusOf(name) === undefined) return Effect.succeed(Option.none())
      return Effect.as(snapshots.remove(name), Option.some(disposed(Effect.void)))
    })

  /**
   * Removes `name`'s dependents (all that require it, directly or not), each before what it
   * depends on, then `name`; a dependent whose disposal is pending (on the caller's lease) makes
   * the disposals after it wait for it in the background, and `name`'s removal pending too.
   */
  const cascade = (name: string, restore: Restore) =>
    Effect.gen(function*() {
      const closure = Dependencies.transitiveDependents(dependents.requiresOf, [name], true)
      const graph = new Map(closure.map((n) => [n, dependents.requiresOf.get(n) ?? []] as const))
      const pending: Array<Removal> = []
      for (const wave of Dependencies.disposeWaves(graph)) {
        for (const dependent of wave) {
          const removed = yield* mutex.withLock(dependent, (inner) => removeOne(dependent, inner), closing.cancelled(`remove plugin ${dependent}`))
          if (Option.isSome(removed) && removed.value.status === "pending") pending.push(removed.value)
        }
      }
      if (pending.length === 0) return yield* removeOne(name, restore)
      // Hidden now; disposed once the pending dependents are.
      const started = instances.get(name)
      if (started === undefined) return yield* removeOne(name, restore)
      instances.hide(name)
      yield* snapshots.disposing(name)
      const waitDependents = Effect.forEach(pending, (r) => Effect.ignore(r.disposal), { discard: true })
      const fiber = yield* Effect.forkDaemon(Effect.zipRight(
        waitDependents,
        Effect.flatMap(
          disposeAfterLeases({ started, dispose: Effect.ensuring(started.dispose, leave(name, started)), views, closing, restore: (e) => e }),
          (removal) => removal.disposal
        )
      ))
      return Option.some(new Removal("pending", Effect.flatten(fiber.await)))
    })

  const remove = (
    name: string,
    options?: RemoveOptions
  ): Effect.Effect<Option.Option<Removal>, RegistryError | CityClosed> =>
    Effect.suspend(() => {
      const refused = closing.refuse(`remove plugin ${name}`)
      if (refused !== undefined) return Effect.fail(refused)
      const body = (restore: Restore) =>
        Effect.suspend((): Effect.Effect<Option.Option<Removal>, RegistryError | CityClosed> => {
          const required = dependents.of(name)
          if (required.length > 0 && options?.cascade !== true) {
            return Effect.fail(new RegistryError({ reason: "PluginHasDependents", plugin: name, dependents: required }))
          }
          // From here on no new dependent is admitted on it.
          dependents.beginRemoval(name)
          return (required.length > 0 ? cascade(name, restore) : removeOne(name, restore)).pipe(
            Effect.ensuring(Effect.sync(() => dependents.endRemoval(name)))
          )
        })
      return mutex.withLock(name, body, closing.cancelled(`remove plugin ${name}`))
    })

  /** Whether it took the plugin out (it was ready, and the City is not closing). */
  const crashed = (name: string, reason: string, status: "error" | "unresponsive" = "error"): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      if (closing.refuse(`record the crash of plugin ${name}`) !== undefined) return Effect.succeed(false)
      const body = (restore: Restore) =>
        Effect.suspend(() => {
          const started = instances.get(name)
          const before = snapshots.current(name)
          if (started === undefined || before?.status !== "ready") return Effect.succeed(false)
          return removeStarted(name, started, restore).pipe(
            Effect.flatMap((removal) => removal.disposal),
            Effect.ignore,
            Effect.zipRight(snapshots.initializing(name, before.version, before.source)),
            Effect.zipRight(snapshots.failed(name, reason, status)),
            Effect.as(true)
          )
        })
      return Effect.orElseSucceed(mutex.withLock(name, body, closing.cancelled(`record the crash of plugin ${name}`)), () => false)
    })

  return { remove, crashed }
}
