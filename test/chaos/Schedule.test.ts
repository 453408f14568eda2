/**
 * The chaos schedule (test/chaos/schedule.ts): the same seed gives the same schedule (a replay),
 * and every schedule keeps the bounds the test relies on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schedule from "./schedule.ts"

const topology = {
  hosts: ["web-01", "web-02", "web-03"],
  endpoints: ["web-01/claude/alice", "web-02/claude/carol", "web-03/claude/erin"],
  capabilities: ["alpha", "beta"]
}

describe("the chaos schedule", () => {
  it("is a function of its seed, and is printed whole with the seed", () => {
    expect(Schedule.make(42, 2, topology)).toEqual(Schedule.make(42, 2, topology))
    expect(Schedule.make(42, 1, topology)).not.toEqual(Schedule.make(43, 1, topology))
    const text = Schedule.describe(Schedule.make(42, 2, topology))
    expect(text).toContain("CITY_CHAOS_SEED=42 CITY_CHAOS_ROUNDS=2")
    expect(text).toContain("pg_ctl restart -m immediate")
  })

  it("keeps its bounds, whatever the seed", () => {
    for (let seed = 0; seed < 200; seed++) {
      const s = Schedule.make(seed, 3, topology)
      // Every fault is over within its round, and a host has one fault at a time.
      for (const f of s.faults) {
        const end = f.kind === "pg-restart" ? f.at : f.at + f.downFor
        expect(Math.floor(f.at / s.roundMs)).toBe(Math.floor(end / s.roundMs))
        expect(end % s.roundMs).toBeLessThanOrEqual(s.roundMs - 5_000)
      }
      for (const host of topology.hosts) {
        const own = s.faults.flatMap((f) => f.kind === "pg-restart" || f.host !== host ? [] : [[f.at, f.at + f.downFor] as const])
        own.forEach(([, end], i) => expect(own[i + 1]?.[0] ?? Number.POSITIVE_INFINITY).toBeGreaterThan(end))
      }
      // Each round: a long SIGKILL and a SIGSTOP longer than 20 s (shown down) and than the lock
      // expiry, shorter than the watchdog's 30 s; a quick SIGKILL; a PostgreSQL restart.
      const long = s.faults.filter((f) => f.kind !== "pg-restart" && f.downFor > 20_000)
      expect(long).toHaveLength(2 * s.rounds)
      expect(long.every((f) => f.kind !== "pg-restart" && f.downFor >= 23_000 && f.downFor < 30_000)).toBe(true)
      expect(s.faults.filter((f) => f.kind === "pg-restart")).toHaveLength(s.rounds)
      // Edits version each endpoint 1, 2, ... in time order, and stop 4 s before the round ends.
      for (const endpoint of topology.endpoints) {
        const own = s.edits.filter((e) => e.endpoint === endpoint)
        expect(own.map((e) => e.version)).toEqual(own.map((_, i) => i + 1))
      }
      expect(s.edits.every((e) => e.at % s.roundMs < s.roundMs - 4_000)).toBe(true)
      // Sweeps follow each capability's state: register only what is not registered.
      for (const capability of topology.capabilities) {
        let registered = capability === topology.capabilities[0]
        for (const step of s.sweeps.filter((x) => x.capability === capability)) {
          expect(step.verb === "register").toBe(!registered)
          registered = step.verb !== "unregister"
        }
      }
    }
  })
})
