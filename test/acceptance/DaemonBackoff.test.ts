/**
 * A real `city daemon` on a failing owed reload (docs/live-application.md, "Failed owed work: the
 * backoff"): the endpoint's Commands-host `reload` journals the time of each run and fails with two
 * lines of stderr. The daemon polls every 100 ms but tries the reload again only on its backoff
 * (`--retry-base-ms 300`): after the verb's failed attempt (the default 1 s), consecutive runs are at
 * least 600, then 1200 ms apart (lower bounds,
 * which a slow machine cannot break), and it logs one line per attempt, numbered on from the verb's
 * failed attempt, the reason on one line. It synchronizes on the journal, never on elapsed time.
 */
import { expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { startDaemon } from "../support/daemonProcess.ts"
import { capability, world } from "../support/world.ts"
import { city, sh, writeJson } from "./cityCli.ts"
import { eventually } from "../fixtures.ts"


it.scopedLive("the daemon retries a failing owed reload on its backoff, not at every poll, logging once per attempt", () =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const w = yield* world
    const runs = join(w.base, "runs")
    const status = yield* sh(join(w.bin, "status"), ["echo idle"])
    const reload = yield* sh(join(w.bin, "reload"), [
      `date +%s%3N >> '${runs}'`,
      "echo 'runtime refused' >&2",
      "echo 'second line' >&2",
      "exit 3"
    ])
    const cmd = (command: string) => ({ command, args: ["{personality}", "{runtime}"] })
    yield* writeJson(w.root, "host.json", {
      schema: 1,
      agent_runtimes: ["claude"],
      channel_runtimes: [],
      profiles: { claude: { commands: { status: cmd(status), reload: cmd(reload) } } }
    })
    const decl = yield* capability(w, "stamp", ["claude"])
    expect((yield* city(["capability", "register", decl], { root: w.root })).code).toBe(1) // attempt 1 failed
    const times = Effect.map(
      Effect.orElseSucceed(fs.readFileString(runs), () => ""),
      (t) => t.split("\n").filter((l) => l !== "").map(Number)
    )
    const d = yield* startDaemon(w.root, w.base, "daemon", ["--retry-base-ms", "300", "--retry-cap-ms", "5000"])
    const failures = Effect.map(
      fs.readFileString(d.log),
      (log) => log.split("\n").filter((l) => l.includes("owed reload of claude-alice failed"))
    )
    yield* eventually(Effect.map(failures, (f) => f.length >= 3), 60_000) // attempts 2, 3 and 4 by the daemon
    yield* d.kill("SIGTERM")
    yield* Deferred.await(d.exited)

    const t = yield* times
    // Attempt n+1 is due 300·2^(n-1) ms after attempt n failed (the verb's own first delay is the default 1 s).
    const gaps = t.slice(1).map((x, i) => x - t[i]!)
    expect(gaps[0]).toBeGreaterThanOrEqual(1_000)
    expect(gaps[1]).toBeGreaterThanOrEqual(600)
    expect(gaps[2]).toBeGreaterThanOrEqual(1_200)
    const logged = yield* failures
    // One line per attempt of the daemon, none per poll (a run the stop cut short may have logged none).
    expect(logged.length).toBeGreaterThanOrEqual(3)
    expect(logged.length).toBeLessThanOrEqual(t.length - 1)
    logged.forEach((line, i) => {
      expect(line).toContain(`(attempt ${i + 2}, next at `)
      expect(line).toContain("runtime refused\\\\nsecond line") // logfmt quotes the one-line reason's backslash
    })
  }).pipe(Effect.provide(NodeContext.layer)), 120_000)
