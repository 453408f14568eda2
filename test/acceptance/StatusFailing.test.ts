/**
 * `city status` on an endpoint whose owed reload failed (docs/live-application.md, "Failed owed
 * work: the backoff"): a real register through the Commands host, whose `status` says idle and
 * whose `reload` exits 3 with two lines of stderr. The failed reload stays owed with its backoff,
 * and `city status` shows `failing (attempt 1, next at <ISO time>)` with the reason on one line;
 * `--json` has `attempts`, `next_attempt_at` and `last_error`.
 */
import { expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { capability, world } from "../support/world.ts"
import { city, json, sh, writeJson } from "./cityCli.ts"


it.scopedLive("city status shows a failing owed reload: attempt, next time, the reason on one line (text and --json)", () =>
  Effect.gen(function*() {
    const w = yield* world
    const status = yield* sh(join(w.bin, "status"), ["echo idle"])
    const reload = yield* sh(join(w.bin, "reload"), ["echo 'runtime refused' >&2", "echo 'second line' >&2", "exit 3"])
    const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
    yield* writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
    })
    const decl = yield* capability(w, "stamp", ["claude"])
    const registered = yield* city(["capability", "register", decl, "--json"], { root: w.root })
    expect(registered.code).toBe(1)
    expect(json(registered)["outcomes"]).toMatchObject([{ runtime: "claude", state: "ok", application: "failed" }])

    const run = yield* city(["status", "--json"], { root: w.root })
    expect(run.code).toBe(0)
    const owed = json(run)["owed"] as ReadonlyArray<Record<string, unknown>>
    expect(owed).toHaveLength(1)
    const entry = owed[0]!
    expect(entry).toMatchObject({ endpoint: "claude-alice", peer: "alice", runtime: "claude", attempts: 1 })
    expect(entry["last_error"]).toBe("endpoint claude-alice: reload failed: runtime refused\nsecond line")
    const next = entry["next_attempt_at"]
    expect(typeof next).toBe("string")
    expect(new Date(next as string).toISOString()).toBe(next)
    // The default base: the next attempt is one second after the failure.
    expect(Date.parse(next as string) - Date.parse(entry["updated_at"] as string)).toBe(1_000)

    const text = yield* city(["status"], { root: w.root })
    expect(text.code).toBe(0)
    const row = text.stdout.split("\n").find((l) => l.startsWith("claude-alice"))
    expect(row).toContain(`failing (attempt 1, next at ${next as string})`)
    expect(row).toMatch(/runtime refused second line/)
  }).pipe(Effect.provide(NodeContext.layer)), 60_000)
