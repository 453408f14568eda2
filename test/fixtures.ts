/**
 * Test fixtures: a City on a real temp root, and probe plugins that journal their lifecycle.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import type * as Path from "@effect/platform/Path"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { readFileSync } from "node:fs"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as City from "../src/City.ts"
import * as StateRoot from "../src/services/root/StateRoot.ts"
import type { Contributions } from "../src/services/Contributions.ts"
import { action } from "../src/services/Contributions.ts"
import * as Plugin from "../src/services/Plugin.ts"
import { PluginContext } from "../src/services/PluginContext.ts"

/** A City on a fresh temp root, closed with the test's Scope. */
export const makeCity = <const P extends ReadonlyArray<City.StartPlugin<unknown>> = readonly []>(
  options: City.CityLayerOptionsFor<P> = {}
): Effect.Effect<
  City.CityShape,
  City.CityBuildError | City.RequiredStartFailure<P> | PlatformError,
  Scope.Scope | FileSystem.FileSystem | City.StartRequirements<P>
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix: "city-test-" })
    return yield* City.make<P>({ ...options, root })
  })

export const provideNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeContext.layer)

/** An ordered record of lifecycle events, shared by the probes of one test. */
export class Journal {
  readonly events: Array<string> = []
  push = (event: string) => Effect.sync(() => void this.events.push(event))
  count = (event: string) => this.events.filter((e) => e === event).length
}

export interface ProbeOptions<E = never> {
  readonly journal: Journal
  /** What initialize does after acquiring its resource; its failure is the plugin's error type. */
  readonly initialize?: Effect.Effect<void, E, Scope.Scope> | undefined
  readonly dispose?: Effect.Effect<void> | undefined
  readonly contributions?: Contributions | undefined
  readonly version?: string | undefined
}

/**
 * A plugin that journals `init:<name>` and `dispose:<name>`, acquires a resource whose release
 * journals `release:<name>`, and offers an `echo` action returning its PluginContext.
 */
export const probe = <E = never>(name: string, options: ProbeOptions<E>) =>
  Plugin.make({
    name,
    version: options.version,
    initialize: Effect.gen(function*() {
      yield* options.journal.push(`init:${name}`)
      yield* Effect.acquireRelease(Effect.void, () => options.journal.push(`release:${name}`))
      yield* Effect.addFinalizer(() =>
        Effect.zipRight(options.journal.push(`dispose:${name}`), options.dispose ?? Effect.void)
      )
      if (options.initialize !== undefined) yield* options.initialize
      return {
        ...options.contributions,
        actions: {
          echo: action({
            input: Schema.Struct({ text: Schema.String }),
            handler: ({ text }) => Effect.map(PluginContext, (ctx) => ({ text, ctx }))
          }),
          ...options.contributions?.actions
        }
      }
    })
  })

/** Advances the TestClock in steps until the fiber is done (the fiber may need several sleeps). */
export const advanceUntilDone = <A, E>(fiber: Fiber.Fiber<A, E>, step: Duration.DurationInput, maxSteps = 100) =>
  Effect.gen(function*() {
    for (let i = 0; i < maxSteps; i++) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return done.value
      yield* TestClock.adjust(step)
      yield* Effect.sleep(0).pipe(Effect.withClock(Clock.make()), Effect.ignore)
    }
    return yield* Fiber.await(fiber)
  })

/**
 * Re-checks `condition` until it holds, failing the test after `timeoutMs` of real time: the one
 * bounded wait of the suite, for in-process fibers and for real files and processes alike. For its
 * first 200 ms it checks at every yield, with a 1 ms real timer every 50 checks (an in-process
 * condition is usually a few fiber steps away, and work on the thread pool gets to finish); after
 * that it checks every 10 ms of real time (a daemon starting, a file written by another process),
 * without a busy loop. The timers are real whatever clock the test has.
 */
export const eventually = <E, R>(condition: Effect.Effect<boolean, E, R>, timeoutMs = 30_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    const deadline = started + timeoutMs
    for (let i = 1; ; i++) {
      if (yield* condition) return
      const now = Date.now()
      if (now > deadline) return yield* Effect.dieMessage(`condition not reached within ${timeoutMs} ms`)
      const pause = now - started > 200 ? 10 : i % 50 === 0 ? 1 : 0
      yield* pause === 0 ? Effect.yieldNow() : Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, pause)))
    }
  })

/**
 * Waits until each fiber is suspended (blocked on what it waits for), so that a check that
 * something has *not* happened is made after the fibers reached their wait, not after a guess.
 */
export const blocked = (...fibers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) =>
  eventually(
    Effect.map(
      Effect.forEach(fibers, (fiber) => Fiber.status(fiber as Fiber.RuntimeFiber<unknown, unknown>)),
      (statuses) => statuses.every((s) => s._tag === "Suspended")
    )
  )

/** The typed failure of an Exit (the test fails if it succeeded or failed with a defect). */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** Whether a process is alive (a zombie has exited: it only waits for its parent to reap it). */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).charAt(0) !== "Z"
  } catch {
    return false
  }
}

/**
 * The endpoints of the commands the process journals under `<root>/state/processes/` name as
 * running (`spawned` and no `ended` line yet, which a journal appends with its next `spawned`
 * line), sorted; read as plain JSON lines, not with the source's Schemas.
 */
export const recordedEndpoints = (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = `${root}/state/processes`
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as Array<string>))
    const endpoints: Array<string> = []
    for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
      const text = yield* fs.readFileString(`${dir}/${name}`).pipe(Effect.orElseSucceed(() => ""))
      const running = new Map<number, string>()
      for (const line of text.split("\n").slice(1)) {
        if (line === "") continue
        const entry = JSON.parse(line) as { op: string; pid: number; endpoint: string }
        if (entry.op === "spawned") running.set(entry.pid, entry.endpoint)
        else running.delete(entry.pid)
      }
      endpoints.push(...running.values())
    }
    return endpoints.sort()
  })

/** `body` on a fresh temp state root: the StateRoot service on it, on Node's platform. */
export const withStateRoot = <A>(
  body: (root: string) => Effect.Effect<A, unknown, FileSystem.FileSystem | Path.Path | StateRoot.StateRoot | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    return yield* body(root).pipe(Effect.provide(StateRoot.layer({ root })))
  }).pipe(Effect.provide(NodeContext.layer))
