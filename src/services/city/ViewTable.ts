/**
 * The lease bookkeeping behind execution views (spec: "City calls dispose only after the final
 * execution lease is released"). Every registry change publishes a new view; a lease counts on the
 * view, never on each plugin, so acquiring and releasing cost O(1) in the number of plugins. A
 * removed plugin is free to dispose once no leased view contains it: the current view never does
 * (it was published without it), so only retired views that still hold leases are checked, and
 * only when one of them lets its last lease go.
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { ExecutionView, type PluginInstance } from "./ExecutionView.ts"

/** A lease on one view. `release` is idempotent: releasing twice is harmless. */
export interface Lease {
  readonly view: ExecutionView
  readonly release: () => void
}

interface ViewState {
  readonly view: ExecutionView
  leases: number
}

interface Waiter {
  readonly instance: PluginInstance
  readonly done: Deferred.Deferred<void>
}

export class ViewTable {
  private current: ViewState = { view: new ExecutionView(0, []), leases: 0 }
  /** Retired views that still hold at least one lease. */
  private readonly leasedRetired = new Set<ViewState>()
  private waiters: Array<Waiter> = []

  /** The current view (not leased). */
  get view(): ExecutionView {
    return this.current.view
  }

  /** Leases the current view. O(1). */
  acquire(): Lease {
    const state = this.current
    state.leases++
    let released = false
    return {
      view: state.view,
      release: () => {
        if (released) return
        released = true
        state.leases--
        if (state.leases === 0 && state !== this.current) {
          this.leasedRetired.delete(state)
          this.wake()
        }
      }
    }
  }

  /** Publishes the next view (the plugins must be in name order). O(plugins), once per change. */
  publish(plugins: ReadonlyArray<PluginInstance>): ExecutionView {
    const previous = this.current
    this.current = { view: new ExecutionView(previous.view.generation + 1, plugins), leases: 0 }
    if (previous.leases > 0) this.leasedRetired.add(previous)
    else this.wake()
    return this.current.view
  }

  /** How many leases are held on views that contain the instance. */
  leasesOf(instance: PluginInstance): number {
    let n = this.current.view.get(instance.name)?.scope === instance.scope ? this.current.leases : 0
    for (const state of this.leasedRetired) {
      if (state.view.get(instance.name)?.scope === instance.scope) n += state.leases
    }
    return n
  }

  /** Total leases held, on every view. */
  get totalLeases(): number {
    let n = this.current.leases
    for (const state of this.leasedRetired) n += state.leases
    return n
  }

  /**
   * Completes once no leased view contains the instance. The instance must already be out of the
   * current view (removed), or this waits for the next publish that drops it.
   */
  unleased(instance: PluginInstance): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.isLeased(instance)) return Effect.void
      const done = Deferred.unsafeMake<void>(FiberId.none)
      const waiter: Waiter = { instance, done }
      this.waiters.push(waiter)
      return Effect.onInterrupt(Deferred.await(done), () =>
        Effect.sync(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter)
        }))
    })
  }

  private isLeased(instance: PluginInstance): boolean {
    if (this.current.view.get(instance.name)?.scope === instance.scope) return true
    for (const state of this.leasedRetired) {
      if (state.view.get(instance.name)?.scope === instance.scope) return true
    }
    return false
  }

  private wake(): void {
    if (this.waiters.length === 0) return
    const still: Array<Waiter> = []
    for (const waiter of this.waiters) {
      if (this.isLeased(waiter.instance)) still.push(waiter)
      else Deferred.unsafeDone(waiter.done, Exit.void)
    }
    this.waiters = still
  }
}
