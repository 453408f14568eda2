/**
 * Property (plugin dependencies, docs/library.md): over random dependency graphs of start plugins
 * (random names, so name order says nothing; required and optional edges; some plugins failing),
 * initialize respects every edge, close disposes in the reverse order, a failure reaches exactly
 * its transitive required dependents (not initialized, an error snapshot saying why), and a graph
 * with a cycle is refused before anything starts, naming a real cycle.
 * `CITY_DEPS_SEED=<seed>` replays a failure.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import * as Plugin from "../../src/services/Plugin.ts"
import { makeCity, provideNode } from "../fixtures.ts"

interface Edge {
  readonly from: number
  readonly to: number
  readonly optional: boolean
}

interface Case {
  readonly names: ReadonlyArray<string>
  readonly edges: ReadonlyArray<Edge>
  readonly failing: ReadonlyArray<boolean>
  /** An edge against the order (from a plugin to a later one): it may close a cycle. */
  readonly back: Edge | undefined
}

const caseArb: FastCheck.Arbitrary<Case> = FastCheck.integer({ min: 1, max: 7 }).chain((n) =>
  FastCheck.record({
    names: FastCheck.shuffledSubarray(["a", "b", "c", "d", "e", "f", "g", "h"], { minLength: n, maxLength: n }),
    edges: FastCheck.array(
      FastCheck.record({ from: FastCheck.nat(n - 1), to: FastCheck.nat(n - 1), optional: FastCheck.boolean() }),
      { maxLength: 12 }
    ).map((edges) => edges.filter((e) => e.from > e.to)),
    failing: FastCheck.array(FastCheck.boolean(), { minLength: n, maxLength: n }).map((fs) => fs.map((f, i) => f && i % 2 === 0)),
    // (Made from any two plugins, not filtered: with one plugin there is no such edge.)
    back: FastCheck.record({ from: FastCheck.nat(n - 1), to: FastCheck.nat(n - 1), optional: FastCheck.boolean(), some: FastCheck.boolean() })
      .map(({ from, optional, some, to }) =>
        some && from !== to ? { from: Math.min(from, to), to: Math.max(from, to), optional } : undefined
      )
  })
)

const seed = process.env["CITY_DEPS_SEED"]

it.scoped.prop(
  "initialize respects every edge, close reverses it, a failure reaches exactly its required dependents, cycles are refused",
  { c: caseArb },
  ({ c }) =>
    provideNode(Effect.gen(function*() {
      const edges = c.back === undefined ? c.edges : [...c.edges, c.back]
      const events: Array<string> = []
      const plugins = c.names.map((name, i) =>
        Plugin.make({
          name,
          requires: edges.filter((e) => e.from === i).map((e) => ({ name: c.names[e.to]!, optional: e.optional })),
          initialize: Effect.gen(function*() {
            events.push(`start ${name}`)
            yield* Effect.addFinalizer(() => Effect.sync(() => void events.push(`dispose ${name}`)))
            yield* Effect.yieldNow()
            events.push(`end ${name}`)
            if (c.failing[i] === true) return yield* Effect.fail("refused")
            return {}
          })
        })
      )
      // Reference: what reaches what (i depends on j, directly or not).
      const reaches = (from: number, to: number, required: boolean): boolean => {
        const seen = new Set<number>()
        const walk = (i: number): boolean =>
          edges.some((e) => e.from === i && (!required || !e.optional) && !seen.has(e.to) && (seen.add(e.to), e.to === to || walk(e.to)))
        return walk(from)
      }
      const cyclic = c.names.some((_, i) => reaches(i, i, false))

      const scope = yield* Scope.make()
      const built = yield* Effect.either(Scope.extend(makeCity({ plugins }), scope))
      if (cyclic) {
        expect(Either.isLeft(built) && built.left).toMatchObject({ _tag: "RegistryError", reason: "PluginDependencyCycle" })
        const cycle = Either.isLeft(built) && built.left._tag === "RegistryError" && built.left.reason === "PluginDependencyCycle"
          ? built.left.cycle ?? []
          : []
        expect(cycle[0]).toBe(cycle[cycle.length - 1])
        for (let k = 0; k + 1 < cycle.length; k++) {
          const from = c.names.indexOf(cycle[k]!)
          const to = c.names.indexOf(cycle[k + 1]!)
          expect(edges.some((e) => e.from === from && e.to === to)).toBe(true)
        }
        expect(events).toEqual([])
        yield* Scope.close(scope, Exit.void)
        return
      }
      expect(Either.isRight(built)).toBe(true)
      if (Either.isLeft(built)) return
      const city = built.right
      const failed = c.names.map((_, i) => c.failing[i] === true)
      // Not initialized: exactly the plugins that require (not optionally) a failing one, directly or not.
      // (Whether or not it would have failed itself.)
      const unstarted = c.names.map((_, i) => c.names.some((_, j) => failed[j] && reaches(i, j, true)))
      const started = (i: number) => events.includes(`start ${c.names[i]}`)
      c.names.forEach((_, i) => expect(started(i), `${c.names[i]} initialized`).toBe(!unstarted[i]))
      // Each initialize begins after the initialize of every plugin it requires has ended.
      for (const e of edges) {
        if (!started(e.from)) continue
        expect(events.indexOf(`end ${c.names[e.to]}`)).toBeLessThan(events.indexOf(`start ${c.names[e.from]}`))
      }
      const snapshots = new Map((yield* city.plugins.snapshots).map((s) => [s.name, s]))
      c.names.forEach((name, i) => {
        const snapshot = snapshots.get(name)
        expect(snapshot?.status, name).toBe(failed[i] || unstarted[i] ? "error" : "ready")
        if (unstarted[i]) expect(snapshot?.last_error).toMatch(/^dependency [a-h] failed: /)
      })
      yield* Scope.close(scope, Exit.void)
      // Every ready plugin disposed once (a failed initialize released its own), dependents first.
      const ready = c.names.filter((_, i) => !failed[i] && !unstarted[i])
      for (const name of ready) expect(events.filter((e) => e === `dispose ${name}`)).toHaveLength(1)
      for (const e of edges) {
        const from = c.names[e.from]!
        const to = c.names[e.to]!
        if (!ready.includes(from) || !ready.includes(to)) continue
        const close = events.slice(events.findIndex((x) => x.startsWith("dispose")))
        expect(close.indexOf(`dispose ${from}`)).toBeLessThan(close.indexOf(`dispose ${to}`))
      }
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None))),
  { timeout: 120_000, fastCheck: { numRuns: Number(process.env["DEPS_RUNS"] ?? 500), ...(seed === undefined ? {} : { seed: Number(seed) }) } }
)
