/**
 * The lease table: the current execution view and the count of leases on every view
 * (docs/city-plugin-lifecycle.md, "Execution leases": "City
 * calls dispose only after the final execution lease is released"). The registry publishes a new
 * view at every change; ExecutionLeases and Sessions lease the current one.
 *
 * A lease counts on the view, never on each plugin, so acquiring and releasing cost O(1) in the
 * number of plugins. A removed plugin is free to dispose once no leased view contains it: the
 * current view never does (it was published without it), so only retired views that still hold
 * leases are checked, and only when one of them lets its last lease go.
 *
 * The fiber that runs under a lease knows it (`heldViews`, inherited by the fibers it forks), so a
 * `remove` issued under a lease that covers its target does not wait for its own lease.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import { globalValue } from "effect/GlobalValue"
import { contains, emptyPlugins, ExecutionView, type PluginInstance, type Plugins } from "../ExecutionView.ts"
import { unsafeLeases } from "../../internal/counters.ts"

/**
 * A lease on one view. `release` is idempotent.
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly view: ExecutionView
  readonly release: () => void
}

/**
 * The current view, the leases on every view, and the wait for a removed plugin's last lease.
 * @since 0.1.0
 * @category models
 */
export interface LeaseTableShape {
  /** The current view (not leased). */
  readonly current: () => ExecutionView
  /** Leases the current view. O(1). */
  readonly acquire: () => Lease
  /** Publishes the next view. O(1): the plugins are a persistent map. */
  readonly publish: (plugins: Plugins) => ExecutionView
  /** Whether some leased view (or the current one) contains this instance. */
  readonly isLeased: (instance: PluginInstance) => boolean
  /** Completes once no leased view contains the instance (which must be out of the current view). */
  readonly unleased: (instance: PluginInstance) => Effect.Effect<void>
  /** Leases held, on every view. */
  readonly leases: () => number
}

/**
 * The lease table as a service.
 * @since 0.1.0
 * @category tags
 */
export class LeaseTable extends Context.Tag("effect-city/LeaseTable")<LeaseTable, LeaseTableShape>() {}

interface ViewState {
  readonly view: ExecutionView
  leases: number
}

interface Waiter {
  readonly instance: PluginInstance
  readonly done: Deferred.Deferred<void>
}

/**
 * Makes the lease table, its current view empty at version 0.
 * @since 0.1.0
 * @category constructors
 */
export const make = (): LeaseTableShape => {
  let current: ViewState = { view: new ExecutionView(0, emptyPlugins), leases: 0 }
  /** Retired views that still hold at least one lease. */
  const leasedRetired = new Set<ViewState>()
  let waiters: Array<Waiter> = []

  const isLeased = (instance: PluginInstance) => {
    if (contains(current.view, instance)) return true
    for (const state of leasedRetired) {
      if (contains(state.view, instance)) return true
    }
    return false
  }

  const wake = () => {
    if (waiters.length === 0) return
    const still: Array<Waiter> = []
    for (const waiter of waiters) {
      if (isLeased(waiter.instance)) still.push(waiter)
      // unsafe: a lease's release is a plain callback (a Step hands its lease over without an Effect).
      else Deferred.unsafeDone(waiter.done, Exit.void)
    }
    waiters = still
  }

  return {
    current: () => current.view,
    acquire: () => {
      const state = current
      state.leases++
      // unsafe: see services/internal/counters.ts, unsafeLeases.
      unsafeLeases(1)
      let released = false
      return {
        view: state.view,
        release: () => {
          if (released) return
          released = true
          // unsafe: as above.
          unsafeLeases(-1)
          if (--state.leases === 0 && state !== current) {
            leasedRetired.delete(state)
            wake()
          }
        }
      }
    },
    publish: (plugins) => {
      const previous = current
      current = { view: new ExecutionView(previous.view.version + 1, plugins), leases: 0 }
      if (previous.leases > 0) leasedRetired.add(previous)
      else wake()
      return current.view
    },
    isLeased,
    unleased: (instance) =>
      Effect.suspend(() => {
        if (!isLeased(instance)) return Effect.void
        // unsafe: made in the synchronous registration of a waiter, completed by the release callback above.
        const waiter: Waiter = { instance, done: Deferred.unsafeMake<void>(FiberId.none) }
        waiters.push(waiter)
        return Effect.onInterrupt(Deferred.await(waiter.done), () =>
          Effect.sync(() => {
            waiters = waiters.filter((w) => w !== waiter)
          }))
      }),
    leases: () => {
      let n = current.leases
      for (const state of leasedRetired) n += state.leases
      return n
    }
  }
}

/**
 * The execution views as a Layer.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(LeaseTable, make)

/**
 * The leases a fiber runs under: set once per Turn (and per call made outside a Turn), shared by
 * the fibers it forks. A Step pushes its lease on entry and pops it on exit, so the per-Step cost is
 * two array operations, not a FiberRef update.
 * @since 0.1.0
 * @category internals
 */
export class HeldViews {
  readonly leases: Array<Lease> = []
  constructor(
    /** What the holder keeps between its Steps (a Turn's last Step's view). */
    readonly between: () => ExecutionView | undefined,
    readonly parent: HeldViews | undefined
  ) {}
  covers(instance: PluginInstance): boolean {
    for (let at: HeldViews | undefined = this; at !== undefined; at = at.parent) {
      const between = at.between()
      if (between !== undefined && contains(between, instance)) return true
      for (const lease of at.leases) if (contains(lease.view, instance)) return true
    }
    return false
  }
}

/**
 * The holder of the views the running fiber holds, if any; inherited by the fibers it forks.
 *
 * Made once per process under a global key (`globalValue`), as Effect makes its own FiberRefs, so
 * loading this module again never makes a second one.
 * @since 0.1.0
 * @category internals
 */
export const heldViews: FiberRef.FiberRef<HeldViews | undefined> = globalValue(
  Symbol.for("effect-city/LeaseTable/heldViews"),
  // unsafe: a module-level FiberRef, made once as Effect makes its own (the safe `FiberRef.make` is scoped).
  () => FiberRef.unsafeMake<HeldViews | undefined>(undefined)
)

/**
 * The leases the running fiber took itself with `city.leases.acquire`/`acquireIn`, if any. Not
 * inherited by the fibers it forks: a fiber forked to remove a plugin waits for a lease its parent
 * holds, while the fiber that holds it does not wait for itself.
 *
 * One per process, as {@link heldViews}.
 * @since 0.1.0
 * @category internals
 */
export const acquiredViews: FiberRef.FiberRef<HeldViews | undefined> = globalValue(
  Symbol.for("effect-city/LeaseTable/acquiredViews"),
  // unsafe: a module-level FiberRef, made once as Effect makes its own (the safe `FiberRef.make` is scoped).
  () => FiberRef.unsafeMake<HeldViews | undefined>(undefined, { fork: () => undefined, join: (parent) => parent })
)

/**
 * Runs `effect` with a new holder whose between-Steps view is `between()`.
 * @since 0.1.0
 * @category internals
 */
export const holding = (between: () => ExecutionView | undefined) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locallyWith(effect, heldViews, (parent) => new HeldViews(between, parent))

/**
 * Runs `effect` as holding `lease` (pushed on the fiber's holder, or a new holder if it has none),
 * then `done`.
 * @since 0.1.0
 * @category internals
 */
export const underLease = <A, E, R>(
  fiber: { readonly getFiberRef: <X>(ref: FiberRef.FiberRef<X>) => X },
  lease: Lease,
  effect: Effect.Effect<A, E, R>,
  done: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E, R> => {
  const holder = fiber.getFiberRef(heldViews)
  if (holder === undefined) {
    return Effect.onExit(holding(() => lease.view)(effect), (exit) => Effect.sync(() => done(exit)))
  }
  holder.leases.push(lease)
  return Effect.onExit(effect, (exit) =>
    Effect.sync(() => {
      const at = holder.leases.lastIndexOf(lease)
      if (at >= 0) holder.leases.splice(at, 1)
      done(exit)
    }))
}

/**
 * Whether the running fiber holds a view that contains the instance: under a Step or call (and
 * the fibers it forks), or through a lease it acquired itself.
 * @since 0.1.0
 * @category internals
 */
export const heldByCaller = (instance: PluginInstance): Effect.Effect<boolean> =>
  Effect.zipWith(
    FiberRef.get(heldViews),
    FiberRef.get(acquiredViews),
    (held, acquired) => (held?.covers(instance) ?? false) || (acquired?.covers(instance) ?? false)
  )
