/**
 * One host of the fleet, whole, in process (docs/cluster.md, "A host in the fleet"): its capability
 * services on the SQL stores (declarations fleet-wide, its peers per host), its live services on
 * its SQL owed-work store, and its runner serving its endpoints' messages through them; a client
 * elsewhere sends a `Provision` (the call runs here, its outcome comes back). Owed reloads travel
 * one way (docs/cluster.md, "Owed reloads: one path"): owed in the host's SQL store, applied by its
 * applier's pass under the claim, once per request. SQLite, one process.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { layerWithStores } from "../../../src/layers/internal/capabilityServices.ts"
import { servicesWith } from "../../../src/layers/internal/liveServices.ts"
import * as CommandRunner from "../../../src/services/capabilities/CommandRunner.ts"
import { Peers } from "../../../src/services/capabilities/Peers.ts"
import { Provisioner } from "../../../src/services/capabilities/Provisioner.ts"
import * as ClusterHost from "../../../src/services/cluster/ClusterHost.ts"
import * as HostStores from "../../../src/services/cluster/internal/hostStores.ts"
import * as ClusterRunner from "../../../src/services/cluster/ClusterRunner.ts"
import { EndpointEntity, entityIdOf } from "../../../src/services/cluster/EndpointEntity.ts"
import { Applier } from "../../../src/services/live/Applier.ts"
import * as SqlHosts from "../../../src/services/cluster/SqlHosts.ts"
import { EndpointHost, type EndpointHostShape } from "../../../src/services/live/EndpointHost.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import { RetryBackoff } from "../../../src/services/owed/RetryBackoff.ts"
import { capability, world } from "../../support/world.ts"
import { freePort } from "../../support/freePort.ts"

describe("a host of the fleet", () => {
  it.live("Provision runs the call on the host; a reload owed in its SQL store is applied once by its pass, none when nothing is owed; a completion the store could not write is written later, never run twice", () =>
    Effect.gen(function*() {
      const w = yield* world
      const file = yield* capability(w, "scribe", ["claude"])
      let runs = 0
      // What happens while a claimed reload runs (the database going away, below).
      let during: Effect.Effect<void> = Effect.void
      const host: EndpointHostShape = {
        status: () => Effect.succeed("idle"),
        reload: (_ref, claim) =>
          Effect.tap(claim, (claimed) => Option.isSome(claimed) ? Effect.zipRight(Effect.sync(() => runs++), during) : Effect.void),
        retire: () => Effect.void,
        kill: () => Effect.void
      }
      const sqlite = SqliteClient.layer({ filename: `${w.base}/fleet.db` })
      const capabilities = layerWithStores(
        { root: w.root, lockWait: Duration.seconds(30) },
        CommandRunner.layer({}),
        HostStores.stores("web-01")
      )
      const live = servicesWith(HostStores.reloads("web-01")).pipe(
        Layer.provideMerge(Layer.succeed(EndpointHost, host)),
        Layer.provideMerge(capabilities)
      )
      const port = yield* freePort
      const whole = ClusterHost.layer({ host: "web-01", address: { host: "127.0.0.1", port } }).pipe(
        Layer.provideMerge(live),
        Layer.provideMerge(Layer.merge(ClusterRunner.clientLayer, SqlHosts.layer).pipe(Layer.provideMerge(sqlite))),
        Layer.provideMerge(sqlite)
      )
      yield* Effect.gen(function*() {
        yield* (yield* Peers).put({ schema: 1, personality: "alice", cwd: w.work, runtimes: ["claude"], default_runtime: "claude" })
        yield* (yield* Provisioner).register(file)
        expect((yield* (yield* SqlHosts.Hosts).list).valid.map((h) => h.host)).toEqual(["web-01"])
        const send = (yield* EndpointEntity.client)(entityIdOf({ host: "web-01", runtime: "claude", personality: "alice" }))
        const outcome = yield* send.Provision({ verb: "sync", capability: "scribe", revision: "1" })
        expect(outcome).toMatchObject({ capability: "scribe", personality: "alice", runtime: "claude", state: "ok" })

        const reloads = yield* Reloads
        const applier = yield* Applier
        const alice = { runtime: "claude", personality: "alice" }
        const before = runs
        // Two requests before the pass: one claim covers both, one reload.
        yield* reloads.request([alice], "test")
        yield* reloads.request([alice], "test")
        yield* applier.pass
        expect(runs).toBe(before + 1)
        expect(yield* reloads.get(alice)).toEqual(Option.none())
        yield* applier.pass
        expect(runs).toBe(before + 1)

        // The peer cannot be read now (its table is away): the endpoint is not "gone", the reload
        // stays owed, and it is applied once the peer can be read again.
        const sql = yield* SqlClient.SqlClient
        yield* reloads.request([alice], "test")
        yield* sql`ALTER TABLE city_peers RENAME TO city_peers_away`
        yield* applier.drain(alice)
        expect(Option.isSome(yield* reloads.get(alice))).toBe(true)
        expect(runs).toBe(before + 1)
        yield* sql`ALTER TABLE city_peers_away RENAME TO city_peers`
        yield* applier.drain(alice)
        expect(yield* reloads.get(alice)).toEqual(Option.none())
        expect(runs).toBe(before + 2)

        // The store fails while a reload runs (its table is away: a database restarting): the
        // reload ran but its completion cannot be written. The claim is this process's own, so a
        // pass must not claim it again and run it twice: the completion is written first, once
        // the store answers, and nothing runs again.
        yield* reloads.request([alice], "test")
        // SQLite's client caches a failed prepare for 10 minutes (Cache keeps failures): prepared here first.
        yield* reloads.list
        during = Effect.orDie(sql`ALTER TABLE city_owed_reloads RENAME TO city_owed_reloads_away`)
        yield* applier.drain(alice)
        during = Effect.void
        expect(runs).toBe(before + 3)
        yield* applier.pass.pipe(Effect.ignore)
        yield* sql`ALTER TABLE city_owed_reloads_away RENAME TO city_owed_reloads`
        expect(Option.getOrThrow(yield* reloads.get(alice)).claim?.pid).toBe(process.pid)
        yield* applier.pass
        yield* applier.pass
        expect(runs).toBe(before + 3)
        expect(yield* reloads.get(alice)).toEqual(Option.none())
        // A request after it is one more reload.
        yield* reloads.request([alice], "test")
        yield* applier.pass
        expect(runs).toBe(before + 4)
      }).pipe(Effect.provide(whole), Effect.provideService(RetryBackoff, { base: Duration.seconds(1), cap: Duration.seconds(8) }))
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)), { timeout: 60_000 })
})
