/**
 * `city.close` returns what it closed (docs/library.md, "Close runs once"): the report a successful
 * close returns is the one `CityCloseError` carries; a later close returns it again. The City
 * layer's Scope logs a close failure only when no caller of `city.close` received it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Pretty from "effect/Pretty"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as City from "../../../../src/City.ts"
import { CloseReport } from "../../../../src/schema/CloseReport.ts"
import * as Loader from "../../../../src/layers/Loader.ts"
import { action } from "../../../../src/services/Contributions.ts"
import * as Plugin from "../../../../src/services/Plugin.ts"
import { advanceUntilDone, blocked, failureOf, Journal, makeCity, probe, provideNode } from "../../../fixtures.ts"

/** Runs `effect` with a logger that collects every message. */
const collectingLogs = Effect.sync(() => {
  const logged: Array<string> = []
  const logger = Logger.make(({ message }) => {
    logged.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
  return { logged, provide: Effect.provide(Logger.replace(Logger.defaultLogger, logger)) }
})

describe("city.close returns what it closed", () => {
  it.scoped("the Sessions it stopped, the plugins it disposed with their durations, the Workspaces it released", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({ drainTimeout: "1 second" })
      const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      yield* city.workspaces.add({ id: "other", path: "/tmp/other" })
      const agent = yield* city.agents.add({ id: "ada" })
      yield* agent.sessions.create({ workspace, id: "open" })
      const closed = yield* agent.sessions.create({ workspace, id: "closed-before" })
      yield* closed.close
      yield* city.plugins.add(probe("quick", { journal }))
      yield* city.plugins.add(probe("slow", { journal, dispose: Effect.sleep("2 seconds") }))
      const closing = yield* Effect.fork(city.close)
      const report = yield* Effect.flatten(advanceUntilDone(closing, "500 millis"))
      expect(report.sessions).toEqual(["open"])
      expect(report.interrupted).toBe(0)
      expect(report.plugins.map((p) => [p.plugin, p.outcome, Duration.toMillis(p.duration)])).toEqual([
        ["slow", "disposed", 2000],
        ["quick", "disposed", 0]
      ])
      expect(report.workspaces).toEqual(["other", "ws"])
      expect(report.failures).toEqual([])
      expect(Duration.toMillis(report.duration)).toBeGreaterThanOrEqual(2000)
      // Runs once: a later close returns the same report and disposes nothing again.
      expect(yield* city.close).toBe(report)
      expect(journal.count("dispose:slow")).toBe(1)
    })))

  it.scoped("the Steps and calls interrupted after drainTimeout, and how long the drain waited", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity({ drainTimeout: "1 second" })
      yield* city.plugins.add(probe("stuck", {
        journal,
        contributions: { actions: { hang: action({ input: Schema.Void, handler: () => Effect.never }) } }
      }))
      const agent = yield* city.agents.add({ id: "ada" })
      const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      const call = yield* Effect.fork(city.calls({ agent, workspace }).invoke("stuck", "hang", undefined))
      yield* blocked(call)
      const closing = yield* Effect.fork(city.close)
      const report = yield* Effect.flatten(advanceUntilDone(closing, "250 millis"))
      expect(report.interrupted).toBe(1)
      expect(Duration.toMillis(report.drain)).toBe(1000)
      expect(Exit.isInterrupted(yield* Fiber.await(call))).toBe(true)
    })))

  it.scoped("a failed close carries the report a successful one returns, with every failure", () =>
    provideNode(Effect.gen(function*() {
      const journal = new Journal()
      const city = yield* makeCity()
      yield* city.plugins.add(probe("good", { journal }))
      yield* city.plugins.add(probe("bad", { journal, dispose: Effect.die(new Error("bad broke")) }))
      const error = failureOf(yield* Effect.exit(city.close))
      expect(error._tag).toBe("CityCloseError")
      expect(error.report.plugins.map((p) => [p.plugin, p.outcome])).toEqual([["good", "disposed"], ["bad", "failed"]])
      expect(error.failures).toBe(error.report.failures)
      expect(error.failures.map((f) => f.subject)).toEqual(["plugin bad"])
      expect(failureOf(yield* Effect.exit(city.close))).toBe(error)
    })))
})

/** A City whose close fails once: a Workspace whose release dies. */
const failingClose = (city: City.CityShape) =>
  Effect.gen(function*() {
    const workspace = yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
    yield* Scope.addFinalizer(workspace.scope, Effect.dieMessage("ws locked"))
  })

describe("the layer's teardown logs a close failure only when no caller received it", () => {
  const layers: ReadonlyArray<readonly [string, (root: string) => Layer.Layer<City.City, unknown, FileSystem.FileSystem>]> = [
    ["City.layer", (root) => City.layer({ root })],
    ["Loader.city", (root) => Loader.city({ root }, { enabled: [], licensed: [] })]
  ]

  for (const [name, make] of layers) {
    it.scoped(`${name}: a failure the caller of city.close received is not logged again`, () =>
      provideNode(Effect.gen(function*() {
        const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "city-close-" })
        const { logged, provide } = yield* collectingLogs
        const scope = yield* Scope.make()
        const city = Context.get(yield* Layer.buildWithScope(make(root), scope), City.City)
        yield* failingClose(city)
        const error = failureOf(yield* Effect.exit(city.close))
        expect(error.failures.map((f) => f.subject)).toEqual(["workspace ws"])
        yield* Scope.close(scope, Exit.void).pipe(provide)
        expect(logged.filter((line) => line.includes("City close had"))).toEqual([])
      })))

    it.scoped(`${name}: a close that only the teardown ran is logged`, () =>
      provideNode(Effect.gen(function*() {
        const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "city-close-" })
        const { logged, provide } = yield* collectingLogs
        const scope = yield* Scope.make()
        const city = Context.get(yield* Layer.buildWithScope(make(root), scope), City.City)
        yield* failingClose(city)
        yield* Scope.close(scope, Exit.void).pipe(provide)
        expect(logged.filter((line) => line.includes("City close had 1 cleanup failure(s)"))).toHaveLength(1)
      })))
  }

  it.scoped("a caller interrupted while it waited for the close has not received it: the teardown logs it", () =>
    provideNode(Effect.gen(function*() {
      const { logged, provide } = yield* collectingLogs
      const scope = yield* Scope.make()
      const city = yield* Scope.extend(makeCity(), scope)
      yield* failingClose(city)
      yield* city.plugins.add(probe("slow", { journal: new Journal(), dispose: Effect.sleep("1 second") }))
      const teardown = yield* Effect.fork(Scope.close(scope, Exit.void).pipe(provide))
      yield* blocked(teardown)
      const waiting = yield* Effect.fork(city.close)
      yield* blocked(waiting)
      yield* Fiber.interrupt(waiting)
      yield* advanceUntilDone(teardown, "500 millis")
      expect(logged.filter((line) => line.includes("City close had 1 cleanup failure(s)"))).toHaveLength(1)
    })))
})

describe("a close report you can print", () => {
  it.scoped("the report, failures and all, encodes through its Schema to plain JSON with durations in milliseconds, and decodes back", () =>
    provideNode(Effect.gen(function*() {
      const city = yield* makeCity()
      yield* city.plugins.add(Plugin.make({ name: "fine", initialize: Effect.succeed({}) }))
      yield* city.plugins.add(Plugin.make({
        name: "sore",
        initialize: Effect.as(Effect.addFinalizer(() => Effect.die(new Error("dispose went wrong"))), {})
      }))
      const closed = yield* Effect.either(city.close)
      const report = closed._tag === "Right" ? closed.right : closed.left.report
      const text = JSON.stringify(Schema.encodeSync(CloseReport)(report))
      const plain = JSON.parse(text) as {
        duration: unknown
        drain: unknown
        plugins: ReadonlyArray<{ plugin: string; duration: unknown }>
        failures: ReadonlyArray<{ subject: string }>
      }
      expect(typeof plain.duration).toBe("number")
      expect(typeof plain.drain).toBe("number")
      expect(plain.plugins.map((p) => [p.plugin, typeof p.duration])).toEqual([["sore", "number"], ["fine", "number"]])
      expect(plain.failures.map((f) => f.subject)).toEqual(["plugin sore"])
      expect(text).toContain("dispose went wrong")
      expect(text).not.toContain("\"_id\":\"Duration\"")
      const back = Schema.decodeUnknownSync(CloseReport)(plain)
      expect(Duration.toMillis(back.duration)).toBe(plain.duration)
      expect(back.plugins.map((p) => p.plugin)).toEqual(["sore", "fine"])
      // Its one-line text form, through the Schema's pretty annotation.
      expect(Pretty.make(CloseReport)(report)).toMatch(/^2 plugins disposed, 1 cleanup failure \(plugin sore\), in \d+ ms$/)
    })))

  it.scoped("the City layer's own log says the close in that one line: at debug level, and with the failures when it failed", () =>
    provideNode(Effect.gen(function*() {
      const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "city-close-" })
      const { logged, provide } = yield* collectingLogs
      for (const fails of [false, true]) {
        const scope = yield* Scope.make()
        const city = Context.get(yield* Layer.buildWithScope(City.layer({ root }), scope), City.City)
        yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
        yield* city.plugins.add(Plugin.make({
          name: "one",
          initialize: Effect.as(Effect.addFinalizer(() => fails ? Effect.die(new Error("gone wrong")) : Effect.void), {})
        }))
        yield* Scope.close(scope, Exit.void).pipe(provide, Logger.withMinimumLogLevel(LogLevel.Debug))
      }
      expect(logged.filter((line) => line.includes("city closed:"))).toEqual([
        expect.stringMatching(/^city closed: 1 plugin disposed, 0 cleanup failures, 1 workspace released, in \d+ ms$/),
        expect.stringMatching(/^City close had 1 cleanup failure\(s\):\n  - plugin one: .*gone wrong[^]*\ncity closed: 1 plugin disposed, 1 cleanup failure \(plugin one\), 1 workspace released, in \d+ ms$/)
      ])
    })))
})
