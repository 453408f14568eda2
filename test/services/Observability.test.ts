/**
 * Tracing and metrics (src/services/Observability.ts): the span tree of one Turn, recorded by an
 * in-memory tracer (no exporter, no network), and the Metrics a Turn moves.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Context from "effect/Context"
import * as Tracer from "effect/Tracer"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { greeter, main, program } from "../../examples/library.ts"
import { traced } from "../../examples/opentelemetry.ts"
import * as City from "../../src/City.ts"
import { layerWith } from "../../src/layers/internal/capabilityServices.ts"
import * as Counters from "../../src/services/internal/counters.ts"
import type { Outcome } from "../../src/schema/Outcome.ts"
import { CommandRunner } from "../../src/services/capabilities/CommandRunner.ts"
import * as Provisioner from "../../src/services/capabilities/Provisioner.ts"
import * as StateRoot from "../../src/services/root/StateRoot.ts"
import * as Observability from "../../src/services/Observability.ts"
import * as Plugin from "../../src/services/Plugin.ts"

const provisionings = (state: string, occasion: string) =>
  Metric.tagged(Metric.tagged(Observability.provisionings, "state", state), "occasion", occasion)

/** A span that remembers what it was told. */
class Recorded implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId: string
  readonly traceId = "trace"
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink> = []
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly kind: Tracer.SpanKind,
    startTime: bigint,
    id: number
  ) {
    this.spanId = `span-${id}`
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event() {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

const recording = () => {
  const spans: Array<Recorded> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span = new Recorded(name, parent, context, kind, startTime, spans.length)
      span.addLinks(links)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

/** The tree under a span, as `name` or `name(attr=value,...)` lines indented by depth. */
const tree = (spans: ReadonlyArray<Recorded>, root: Recorded, keys: ReadonlyArray<string>, depth = 0): Array<string> => {
  const attrs = keys.filter((k) => root.attributes.get(k) !== undefined).map((k) => `${k}=${root.attributes.get(k)}`)
  const line = `${"  ".repeat(depth)}${root.name}${attrs.length === 0 ? "" : `(${attrs.join(",")})`}`
  const children = spans.filter((s) => Option.isSome(s.parent) && s.parent.value.spanId === root.spanId)
  return [line, ...children.flatMap((child) => tree(spans, child, keys, depth + 1))]
}

const root = () => mkdtempSync(join(tmpdir(), "city-observability-"))

describe("tracing", () => {
  it.effect("a Turn's Steps are spans under the Turn, and the plugin calls are spans under their Step", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recording()
      const result = yield* main(root()).pipe(Effect.withSpan("host"), Effect.withTracer(tracer))
      expect(result.reply).toBe("Hello Grace, from ada in notes")

      const turn = spans.find((s) => s.name === Observability.spans.turn)
      expect(turn, "a city.turn span").toBeDefined()
      expect(Option.map(turn!.parent, (p) => p.spanId)).toEqual(Option.some(spans.find((s) => s.name === "host")!.spanId))
      expect(tree(spans, turn!, ["agent", "session", "turn", "step", "plugin", "action"])).toEqual([
        `city.turn(agent=ada,session=${turn!.attributes.get("session")},turn=1)`,
        `  city.step(agent=ada,session=${turn!.attributes.get("session")},turn=1,step=1)`,
        `    city.system(agent=ada,session=${turn!.attributes.get("session")},turn=1)`,
        `  city.step(agent=ada,session=${turn!.attributes.get("session")},turn=1,step=2)`,
        `    city.invoke(agent=ada,session=${turn!.attributes.get("session")},turn=1,plugin=greeter,action=greet)`
      ])
      expect(spans.every((s) => s.status._tag === "Ended")).toBe(true)
    }))

  it.effect("initialize and dispose of a plugin are spans naming the plugin", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recording()
      yield* main(root()).pipe(Effect.withTracer(tracer))
      const named = (name: string) => spans.filter((s) => s.name === name).map((s) => s.attributes.get("plugin"))
      expect(named(Observability.spans.initialize)).toEqual(["greeter"])
      expect(named(Observability.spans.dispose)).toEqual(["greeter"])
    }))

  it.scoped("a dispose is a span under the call that removed the plugin; its initialize and its finalizers log as the plugin", () => {
    const { spans, tracer } = recording()
    const logged: Array<string> = []
    const logger = Logger.make(({ annotations, message }) => {
      const plugin = Option.getOrElse(HashMap.get(annotations, "plugin"), () => "-")
      logged.push(`${String(plugin)}: ${String(message)}`)
    })
    return Effect.gen(function*() {
      const city = yield* City.make({ root: root() })
      const keeper = Plugin.make({
        name: "keeper",
        initialize: Effect.zipRight(Effect.logInfo("acquiring"), Effect.as(Effect.addFinalizer(() => Effect.logInfo("released")), {}))
      })
      yield* city.plugins.add(keeper).pipe(Effect.withSpan("adder"))
      yield* Effect.logInfo("between") // the caller's own logs are not the plugin's
      yield* city.plugins.remove("keeper").pipe(Effect.withSpan("remover"))
      const dispose = spans.find((s) => s.name === Observability.spans.dispose)
      const remover = spans.find((s) => s.name === "remover")
      expect(dispose, "a city.plugin.dispose span").toBeDefined()
      expect(Option.map(dispose!.parent, (p) => p.spanId)).toEqual(Option.some(remover!.spanId))
      expect(logged).toEqual(["keeper: acquiring", "-: between", "keeper: released"])
    }).pipe(Effect.withTracer(tracer), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  })

  it.effect("without a tracer of its own, a Step makes no span (its body sees the caller's span)", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const record = Effect.flatMap(Effect.currentSpan, (span) => Effect.sync(() => seen.push(span.name)))
      yield* Effect.gen(function*() {
        const city = yield* City.City
        const agent = yield* city.agents.add({ id: "ada" })
        const workspace = yield* city.workspaces.add({ id: "w", path: process.cwd() })
        const session = yield* agent.sessions.create({ workspace })
        yield* session.turn((turn) => turn.step(() => record))
      }).pipe(Effect.withSpan("host"), Effect.provide(City.layer({ root: root(), plugins: [greeter] })))
      expect(seen).toEqual(["host"])
    }))
})

describe("metrics", () => {
  it.effect("a Turn of two Steps counts two Steps, and its leases are all given back", () =>
    Effect.gen(function*() {
      const stepsBefore = (yield* Metric.value(Observability.steps)).count
      const leasesBefore = (yield* Metric.value(Observability.heldLeases)).count
      const initializeBefore = (yield* Metric.value(Observability.initializeDuration)).count
      const disposeBefore = (yield* Metric.value(Observability.disposeDuration)).count
      yield* main(root())
      expect((yield* Metric.value(Observability.steps)).count - stepsBefore).toBe(2)
      expect((yield* Metric.value(Observability.heldLeases)).count).toBe(leasesBefore)
      expect((yield* Metric.value(Observability.initializeDuration)).count - initializeBefore).toBe(1)
      expect((yield* Metric.value(Observability.disposeDuration)).count - disposeBefore).toBe(1)
    }))

  it.scoped("initialize and dispose durations count failures too, in milliseconds", () =>
    Effect.gen(function*() {
      const initializeBefore = yield* Metric.value(Observability.initializeDuration)
      const disposeBefore = yield* Metric.value(Observability.disposeDuration)
      const city = yield* City.make({ root: root() })
      yield* Effect.either(city.plugins.add(Plugin.make({ name: "broken", initialize: Effect.fail("no") })))
      yield* city.plugins.add(Plugin.make({
        name: "leaky",
        initialize: Effect.as(Effect.addFinalizer(() => Effect.die("leak")), {})
      }))
      yield* Effect.either(city.plugins.remove("leaky"))
      const initialize = yield* Metric.value(Observability.initializeDuration)
      const dispose = yield* Metric.value(Observability.disposeDuration)
      expect(initialize.count - initializeBefore.count).toBe(2) // the failed one and the good one
      expect(dispose.count - disposeBefore.count).toBe(1) // a dispose that failed
      // Milliseconds: the two took less than a second each (the metric is global: other tests' are in `max`).
      expect(initialize.sum - initializeBefore.sum).toBeLessThan(2_000)
    }))

  it.effect("plugins by status follow the registry: ready while the City runs, none once it closed", () =>
    Effect.gen(function*() {
      const ready = Metric.tagged(Observability.plugins, "status", "ready")
      const before = (yield* Metric.value(ready)).count
      const during = yield* Effect.zipRight(program, Metric.value(ready)).pipe(
        Effect.provide(City.layer({ root: root(), plugins: [greeter] }))
      )
      expect(during.count - before).toBe(1)
      expect((yield* Metric.value(ready)).count).toBe(before)
    }))

  it("a status change moves one plugin from one status to the other", () => {
    const count = (status: string) => Metric.tagged(Observability.plugins, "status", status).unsafeValue([]).count
    const [error, disposing] = [count("error"), count("disposing")]
    Counters.unsafeStatusChanged("error", "disposing")
    expect([count("error") - error, count("disposing") - disposing]).toEqual([-1, 1])
    Counters.unsafeStatusChanged("disposing", "error")
    expect([count("error"), count("disposing")]).toEqual([error, disposing])
  })
})

/** An in-memory exporter that keeps its spans when the SDK shuts down with the example's Layer. */
class KeepingExporter extends InMemorySpanExporter {
  override shutdown() {
    return Promise.resolve()
  }
}

describe("OpenTelemetry (examples/opentelemetry.ts)", () => {
  it.effect("the example exports the Turn, its Steps and the plugin calls as OpenTelemetry spans", () =>
    Effect.gen(function*() {
      const exporter = new KeepingExporter()
      yield* traced(root(), new SimpleSpanProcessor(exporter))
      const finished = exporter.getFinishedSpans()
      const byName = (name: string) => finished.filter((s) => s.name === name)
      const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
      const [turn] = byName(Observability.spans.turn)
      expect(turn?.attributes).toMatchObject({ agent: "ada", turn: 1 })
      const steps = byName(Observability.spans.step)
      expect(steps.map((s) => s.attributes["step"])).toEqual([1, 2])
      expect(steps.every((s) => parentOf(s) === turn!.spanContext().spanId)).toBe(true)
      const [invoke] = byName(Observability.spans.invoke)
      expect(invoke?.attributes).toMatchObject({ plugin: "greeter", action: "greet" })
      expect(parentOf(invoke!)).toBe(steps[1]!.spanContext().spanId)
      expect(byName(Observability.spans.initialize).map((s) => s.attributes["plugin"])).toEqual(["greeter"])
    }))
})

/** Registers a `demo` capability over peers with a claude runtime each, on a temp root, with `runner`. */
const registerDemo = (personalities: ReadonlyArray<string>, runner: Layer.Layer<CommandRunner>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped()
    const file = join(dir, "demo.json")
    yield* fs.writeFileString(file, JSON.stringify({
      schema: 1,
      capability: "demo",
      runtimes: ["claude"],
      provision: { command: "/bin/true", args: ["{personality}"] },
      unprovision: { command: "/bin/true", args: ["{personality}"] }
    }))
    yield* Effect.gen(function*() {
      const state = yield* StateRoot.StateRoot
      for (const personality of personalities) {
        yield* state.writeJson(`peers/${personality}.json`, {
          schema: 1,
          personality,
          cwd: dir,
          runtimes: ["claude"],
          default_runtime: "claude"
        })
      }
      yield* (yield* Provisioner.Provisioner).register(file)
    }).pipe(Effect.provide(layerWith({ root: join(dir, "root") }, runner)))
  })

describe("capability joints", () => {
  it.scoped("a sweep is a city.joint span with a city.provision span per call, its outcome recorded", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recording()
      const failedBefore = (yield* Metric.value(provisionings("failed", "sweep-on"))).count
      const okBefore = (yield* Metric.value(provisionings("ok", "sweep-on"))).count
      const runner = Layer.succeed(CommandRunner, CommandRunner.of({
        run: (request) => Effect.succeed<Outcome>({ state: request.args.includes("bob") ? "failed" : "ok", ms: 1 })
      }))
      yield* registerDemo(["ann", "bob"], runner).pipe(Effect.withTracer(tracer))

      const joint = spans.find((s) => s.name === Observability.spans.joint)
      expect(joint, "a city.joint span").toBeDefined()
      expect(tree(spans, joint!, ["capability", "endpoint", "occasion", "outcome"]).sort()).toEqual([
        "  city.provision(capability=demo,endpoint=claude-ann,occasion=sweep-on,outcome=ok)",
        "  city.provision(capability=demo,endpoint=claude-bob,occasion=sweep-on,outcome=failed)",
        "city.joint(capability=demo,occasion=sweep-on)"
      ])
      expect((yield* Metric.value(provisionings("failed", "sweep-on"))).count - failedBefore).toBe(1)
      expect((yield* Metric.value(provisionings("ok", "sweep-on"))).count - okBefore).toBe(1)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("without a tracer a sweep makes no city.provision spans, and still counts every call", () =>
    Effect.gen(function*() {
      const okBefore = (yield* Metric.value(provisionings("ok", "sweep-on"))).count
      const seen: Array<Option.Option<string>> = []
      const runner = Layer.succeed(CommandRunner, CommandRunner.of({
        // The span a command's run sees: the caller's (the joint's), not a city.provision of its own.
        run: () =>
          Effect.map(Effect.option(Effect.currentSpan), (span) => {
            seen.push(Option.map(span, (s) => s.name))
            return { state: "ok", ms: 1 } satisfies Outcome
          })
      }))
      yield* registerDemo(["ann", "bob", "cy"], runner)

      expect(seen).toHaveLength(3)
      expect(seen.every((name) => Option.getOrNull(name) !== Observability.spans.provision)).toBe(true)
      expect((yield* Metric.value(provisionings("ok", "sweep-on"))).count - okBefore).toBe(3)
    }).pipe(Effect.provide(NodeContext.layer)))
})
