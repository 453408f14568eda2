/**
 * Property (issue 10, "Owed reloads are durable"): the owed-reload record under random
 * interleavings of request / start / finish / crash, against a small model. After every
 * command the durable record equals the model; every completed reload strictly raises `applied`
 * (repeats coalesce); a request during a reload keeps the record owed (never silently consumed);
 * and after the sequence (a crash possibly in the middle of a reload) draining applies exactly one
 * reload if anything is owed, none otherwise.
 *
 * Every behaviour test here runs against each implementation of the `Reloads` service: the file
 * store (owed/Reloads.ts, on an in-memory state root) and the SQL store (cluster/SqlReloads.ts, on
 * SQLite in a temp file and on PostgreSQL in a database of this file's own, on the run's server:
 * test/support/postgres.ts), so a difference between them fails. On PostgreSQL, two clients race
 * too: their changes of one row are serialized (`FOR UPDATE`).
 *
 * 500 runs (fewer on SQL). On failure fast-check prints `seed` and `path`; replay with
 * `CITY_PROP_SEED=<seed> CITY_PROP_PATH=<path> npx vitest run test/property/Reloads.test.ts`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Deferred from "effect/Deferred"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
import { freshDatabase } from "../support/pgDatabase.ts"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import * as Metric from "effect/Metric"
import * as Observability from "../../src/services/Observability.ts"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { StateRoot } from "../../src/services/root/StateRoot.ts"
import * as SqlReloads from "../../src/services/cluster/SqlReloads.ts"
import * as Reloads from "../../src/services/owed/Reloads.ts"
import type { OwedRecord } from "../../src/schema/Live.ts"
import { memoryStateRoot } from "../support/memoryState.ts"

type Command = "request" | "start" | "finish" | "crash"
const command: FastCheck.Arbitrary<Command> = FastCheck.constantFrom("request", "start", "finish", "crash")
const key = { personality: "alice", runtime: "claude" }

const seed = process.env["CITY_PROP_SEED"]
const path = process.env["CITY_PROP_PATH"]
const replay = seed === undefined ? {} : { seed: Number(seed), ...(path === undefined ? {} : { path }) }

/**
 * One implementation of the store, fresh for each use, with a way to store an endpoint's record as
 * text behind the service's back, and the runs of the property (SQLite's durable writes cost about
 * twice the in-memory root's: fewer runs keep the suite in its budget).
 */
interface Store {
  readonly name: string
  readonly runs: number
  readonly make: Effect.Effect<
    {
      readonly reloads: Reloads.Reloads["Type"]
      readonly put: (key: Reloads.EndpointKey, text: string) => Effect.Effect<void>
    },
    never,
    Scope.Scope
  >
}

const files: Store = {
  name: "files",
  runs: 500,
  make: Effect.gen(function*() {
    const memory = memoryStateRoot()
    const reloads = yield* Reloads.make.pipe(Effect.provideService(StateRoot, memory.service), Effect.provide(NodeFileSystem.layer))
    const put = (key: Reloads.EndpointKey, text: string) =>
      Effect.orDie(memory.service.writeText(`${Reloads.reloadsDir}/${key.runtime}-${key.personality}.json`, text))
    return { reloads, put }
  })
}

// One SQLite database in a temp folder for the file (opening one and migrating it costs more than a
// property run's commands): each use of the store starts from an empty table. The example test
// (test/repository/Examples.test.ts) covers a fresh database.
const sqliteScope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(sqliteScope, Exit.void)))
const sqliteContext = Effect.runSync(Effect.cached(
  Effect.gen(function*() {
    const dir = yield* FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))
    return yield* Layer.build(Layer.provideMerge(SqlReloads.layer({ host: "web-01" }), SqliteClient.layer({ filename: `${dir}/city.db` })))
  }).pipe(Effect.provide(NodeFileSystem.layer), Scope.extend(sqliteScope), Effect.orDie)
))

const sqlite: Store = {
  name: "SQLite",
  runs: 200,
  make: Effect.gen(function*() {
    const context = yield* sqliteContext
    const sql = yield* Effect.provide(SqlClient.SqlClient, context)
    yield* sql`DELETE FROM ${sql(SqlReloads.table)}`
    const put = (key: Reloads.EndpointKey, text: string) =>
      Effect.orDie(sql`INSERT INTO ${sql(SqlReloads.table)} (host, runtime, personality, record)
          VALUES (${"web-01"}, ${key.runtime}, ${key.personality}, ${text})
          ON CONFLICT (host, runtime, personality) DO UPDATE SET record = excluded.record`)
    return { reloads: yield* Effect.provide(Reloads.Reloads, context), put }
  }).pipe(Effect.orDie)
}

// One database of this file's own on the run's PostgreSQL server, migrated once, as SQLite's.
const pgScope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(pgScope, Exit.void)))
const pgUrl = Effect.runSync(Effect.cached(Effect.orDie(Scope.extend(freshDatabase(inject("postgresUrl")), pgScope))))
const pgClient = (url: string) => PgClient.layer({ url: Redacted.make(url) })
const pgContext = Effect.runSync(Effect.cached(
  Effect.gen(function*() {
    const url = yield* pgUrl
    return yield* Layer.build(Layer.provideMerge(SqlReloads.layer({ host: "web-01" }), Layer.merge(pgClient(url), NodeFileSystem.layer)))
  }).pipe(Scope.extend(pgScope), Effect.orDie)
))

const postgres: Store = {
  name: "PostgreSQL",
  // A command is a few round trips to the server (about SQLite's cost again): fewer runs still.
  runs: 100,
  make: Effect.gen(function*() {
    const context = yield* pgContext
    const sql = yield* Effect.provide(SqlClient.SqlClient, context)
    yield* sql`DELETE FROM ${sql(SqlReloads.table)}`
    const put = (key: Reloads.EndpointKey, text: string) =>
      Effect.orDie(sql`INSERT INTO ${sql(SqlReloads.table)} (host, runtime, personality, record)
          VALUES (${"web-01"}, ${key.runtime}, ${key.personality}, ${text})
          ON CONFLICT (host, runtime, personality) DO UPDATE SET record = excluded.record`)
    return { reloads: yield* Effect.provide(Reloads.Reloads, context), put }
  }).pipe(Effect.orDie)
}

describe.each([files, sqlite, postgres])("the $name store", (store) => {
it.effect.prop(
  "owed reloads: never consumed silently, coalesced, exactly one more after a crash",
  { commands: FastCheck.array(command, { maxLength: 40 }) },
  ({ commands }) =>
    Effect.gen(function*() {
      const { reloads } = yield* store.make
      // The model: sequence numbers, and the reload in flight in the current process (lost at a crash).
      let requested = 0
      let applied = 0
      let inFlight: number | undefined
      let completed = 0

      const durable = Effect.map(reloads.get(key), Option.map((r) => [r.requested, r.applied] as const))
      const check = Effect.gen(function*() {
        const record = yield* durable
        // A settled record is deleted.
        if (requested > applied) expect(Option.getOrThrow(record)).toEqual([requested, applied])
        else expect(Option.isNone(record)).toBe(true)
      })

      for (const c of commands) {
        if (c === "request") {
          yield* reloads.request([key], "test")
          requested++
        } else if (c === "start") {
          if (inFlight !== undefined) continue // one reload per endpoint at a time in a process
          const target = yield* reloads.claim(key)
          expect(Option.getOrUndefined(target)).toBe(requested > applied ? requested : undefined)
          if (Option.isSome(target)) inFlight = target.value
        } else if (c === "finish") {
          if (inFlight === undefined) continue
          expect(inFlight).toBeGreaterThan(applied) // a completed reload always raises `applied`
          yield* reloads.complete(key, inFlight)
          applied = Math.max(applied, inFlight)
          completed++
          inFlight = undefined
          // Settled: the record is deleted, and numbering starts again from zero.
          if (applied >= requested) requested = applied = 0
        } else {
          inFlight = undefined // the process died: only what was written survives
        }
        yield* check
      }
      expect(completed).toBeLessThanOrEqual(commands.filter((c) => c === "request").length)

      // Drain (a restarted daemon): exactly one reload if anything is owed, none otherwise.
      inFlight = undefined
      let drained = 0
      for (;;) {
        const target = yield* reloads.claim(key)
        if (Option.isNone(target)) break
        drained++
        yield* reloads.complete(key, target.value)
        expect(drained).toBeLessThanOrEqual(1)
      }
      expect(drained).toBe(requested > applied ? 1 : 0)
      expect(Option.isNone(yield* reloads.get(key))).toBe(true)
    }).pipe(Effect.scoped),
  // 500 runs (200 on SQLite, 100 on PostgreSQL) of up to 40 durable steps: seconds alone, much longer on a busy machine.
  { timeout: 180_000, fastCheck: { numRuns: store.runs, ...replay } }
)

it.effect("a request arriving during a reload owes exactly one more reload", () =>
  Effect.gen(function*() {
    const { reloads } = yield* store.make
    yield* reloads.request([key], "register")
    yield* reloads.request([key], "sync") // coalesces with the first
    const first = Option.getOrThrow(yield* reloads.claim(key))
    expect(first).toBe(2)
    yield* reloads.request([key], "unregister") // during the reload
    yield* reloads.complete(key, first)
    const second = Option.getOrThrow(yield* reloads.claim(key))
    expect(second).toBe(3)
    yield* reloads.complete(key, second)
    expect(Option.isNone(yield* reloads.claim(key))).toBe(true)
  }).pipe(Effect.scoped))

it.effect("a claim whose holder's pid now belongs to another process (a reused pid) is taken over", () =>
  Effect.gen(function*() {
    const { put, reloads } = yield* store.make
    const [record] = yield* reloads.request([key], "register")
    // A live process holds the recorded pid, but it is not the one that claimed (another start).
    const stranger = spawn("sleep", ["60"], { stdio: "ignore" })
    yield* Effect.addFinalizer(() => Effect.sync(() => void stranger.kill("SIGKILL")))
    const claimed: OwedRecord = {
      ...record!,
      claim: { pid: stranger.pid!, start: "another-boot:1", target: record!.requested, at: record!.updated_at }
    }
    yield* put(key, JSON.stringify(claimed))
    expect(Option.getOrThrow(yield* reloads.claim(key))).toBe(record!.requested)
  }).pipe(Effect.scoped))

it.effect("listing the owed records sets the owed-work gauges (city_reloads_owed, city_removals_owed)", () =>
  Effect.gen(function*() {
    const { reloads } = yield* store.make
    const other = { ...key, runtime: `${key.runtime}x` }
    yield* reloads.request([key, other], "register")
    yield* reloads.requestRemoval(other)
    yield* reloads.list
    expect((yield* Metric.value(Observability.owedReloads)).value).toBe(2)
    expect((yield* Metric.value(Observability.owedRemovals)).value).toBe(1)
    const target = Option.getOrThrow(yield* reloads.claim(key))
    yield* reloads.complete(key, target)
    yield* reloads.list
    expect((yield* Metric.value(Observability.owedReloads)).value).toBe(1)
  }).pipe(Effect.scoped))

it.effect("a record that does not decode is reported by scan and invalid, skipped by list, refused by get, replaced by recover", () =>
  Effect.gen(function*() {
    const { put, reloads } = yield* store.make
    const other = { ...key, runtime: `${key.runtime}x` }
    yield* reloads.request([other], "register")
    yield* put(key, JSON.stringify({ schema: 1, personality: "alice", runtime: "claude", requested: -1 }))
    expect((yield* reloads.list).map((r) => r.runtime)).toEqual([other.runtime])
    const refused = yield* Effect.flip(reloads.get(key))
    expect(refused).toMatchObject({ _tag: "StateRootError", reason: "StateError" })
    expect(refused.detail).toContain("requested")
    const found = yield* reloads.invalid
    expect(found).toHaveLength(1)
    expect(found[0]!.identity).toBe("claude-alice")
    expect(found[0]!.file).toContain("claude")
    expect(found[0]!.file).toContain("alice")
    expect(found[0]!.field).toBe("requested")
    expect((yield* reloads.scan).valid.map((r) => r.runtime)).toEqual([other.runtime])
    // Replaced by a record owing one reload (the one it stood for cannot be known); once only.
    expect(yield* reloads.recover(key)).toBe(true)
    expect(yield* reloads.recover(key)).toBe(false)
    const replaced = Option.getOrThrow(yield* reloads.get(key))
    expect(replaced.requested).toBeGreaterThan(replaced.applied)
    expect(yield* reloads.invalid).toEqual([])
    expect(yield* reloads.recover(other)).toBe(false)
  }).pipe(Effect.scoped))

it.effect("a request on an endpoint whose record does not decode replaces it and owes a reload", () =>
  Effect.gen(function*() {
    const { put, reloads } = yield* store.make
    yield* put(key, "{ not json")
    const [record] = yield* reloads.request([key], "sync")
    expect(record!.requested - record!.applied).toBe(2) // the one it stood for, and this one
    expect(yield* reloads.invalid).toEqual([])
  }).pipe(Effect.scoped))
})

it.effect("on SQL, each host's store sees and changes its own rows only", () =>
  Effect.gen(function*() {
    yield* sqlite.make
    const context = yield* sqliteContext
    const web01 = yield* Effect.provide(Reloads.Reloads, context)
    const web02 = yield* SqlReloads.make("web-02").pipe(Effect.provide(context), Effect.provide(NodeFileSystem.layer))
    yield* web01.request([key], "register")
    expect(yield* web02.list).toEqual([])
    expect(Option.isNone(yield* web02.get(key))).toBe(true)
    expect(Option.isNone(yield* web02.claim(key))).toBe(true)
    yield* web02.request([key], "sync")
    yield* web02.completeRemoval(key)
    expect(Option.getOrThrow(yield* web01.get(key)).requested).toBe(1)
    expect((yield* web01.list).map((r) => r.personality)).toEqual([key.personality])
  }).pipe(Effect.scoped))

it.effect("a claim held by another live process is respected; a dead claimant's is taken over", () =>
  Effect.gen(function*() {
    const record = Reloads.transitions.request(Reloads.transitions.empty(key, "t0"), "x", "t1")
    const first = { pid: 111, start: "boot:1" }
    const claimed = Option.getOrThrow(Reloads.transitions.claim(record, first, "t2", () => true))
    expect(claimed.claim).toMatchObject({ pid: 111, start: "boot:1" })
    // The liveness asked about is the holder's identity, pid and start.
    const asked: Array<unknown> = []
    const alive = (holder: unknown) => {
      asked.push(holder)
      return true
    }
    expect(Option.isNone(Reloads.transitions.claim(claimed, { pid: 222, start: "boot:2" }, "t3", alive))).toBe(true)
    expect(asked).toEqual([first])
    expect(Option.getOrThrow(Reloads.transitions.claim(claimed, { pid: 222, start: null }, "t3", () => false)).claim?.pid).toBe(222)
  }))

/** The store of host web-01 on its own client (its own pool of connections) to the file's database. */
const secondClient = Effect.gen(function*() {
  const url = yield* pgUrl
  const context = yield* Layer.build(Layer.merge(pgClient(url), NodeFileSystem.layer))
  return yield* SqlReloads.make("web-01").pipe(Effect.provide(context))
})

it.live("on PostgreSQL, concurrent requests from two clients are never lost", () =>
  Effect.gen(function*() {
    const { reloads } = yield* postgres.make
    const other = yield* secondClient
    const n = 40
    yield* Effect.all(
      Array.from({ length: n }, (_, i) => (i % 2 === 0 ? reloads : other).request([key], `r${i}`)),
      { concurrency: "unbounded" }
    )
    expect(Option.getOrThrow(yield* reloads.get(key)).requested).toBe(n)
  }).pipe(Effect.scoped))

it.live("on PostgreSQL, two processes racing to claim one endpoint never both get the target", () =>
  Effect.gen(function*() {
    const { reloads } = yield* postgres.make
    const url = yield* pgUrl
    yield* reloads.request([key], "register")
    // The other claimant is another process: a claim by this process is its own business.
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/fixtures/pgClaimant.ts", url, "web-01", key.runtime, key.personality],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: ["pipe", "pipe", "inherit"] }
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => void child.kill("SIGKILL")))
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
    const nextLine = Effect.promise(() => lines.next()).pipe(Effect.map((r) => r.done ? "(exited)" : String(r.value)))
    expect(yield* nextLine).toBe("ready")

    // A third connection holds the row, so both claims are under way before either can change it.
    const lockClient = yield* Layer.build(pgClient(url))
    const sql = yield* Effect.provide(SqlClient.SqlClient, lockClient)
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT record FROM ${sql(SqlReloads.table)} WHERE host = ${"web-01"} FOR UPDATE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })).pipe(Effect.fork)
    yield* Deferred.await(locked)

    const ours = yield* Effect.fork(reloads.claim(key))
    child.stdin!.write("claim\n")
    const theirs = yield* Effect.fork(nextLine)
    // Both claims wait on the row's lock (whichever statement of theirs reaches it).
    const waiting = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(Effect.map((rows) => rows[0]!.n))
    yield* waiting.pipe(Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (n) => n >= 2 }))
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)

    const got = [Option.getOrNull(yield* Fiber.join(ours)), JSON.parse(yield* Fiber.join(theirs)) as number | null]
    expect(got.filter((target) => target === 1)).toHaveLength(1)
    expect(got.filter((target) => target === null)).toHaveLength(1)
    child.stdin!.end()
  }).pipe(Effect.scoped), 60_000)
