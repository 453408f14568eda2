/**
 * Reports a user receives print (docs/library.md, "Reports"): a load's `LoadReport`, a joint's
 * `JointReport` and a fleet's `SweepReport` encode through their Schema to plain JSON and decode
 * back, and each has a one-line text form (`Pretty.make(Schema)`), the one the layers' own logs use.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Logger from "effect/Logger"
import * as Pretty from "effect/Pretty"
import * as Schema from "effect/Schema"
import { LoadReport } from "../../src/schema/LoadReport.ts"
import { InvalidFile } from "../../src/schema/FileErrors.ts"
import { JointReport } from "../../src/services/capabilities/Provisioner.ts"
import { SweepReport } from "../../src/services/cluster/Sweep.ts"
import { provideNode } from "../fixtures.ts"
import { makeRoots, manifest, registerEntry, startLoader, unique, withLogs, writePlugin } from "../loaderFixtures.ts"

describe("a load report you can print", () => {
  it.scoped("a load with a skipped folder and a missing name: plain JSON through its Schema, and one line, which the loader's own log says", () =>
    provideNode(withLogs((logs) =>
      Effect.gen(function*() {
        const { root, instance } = yield* makeRoots
        writePlugin(instance, "fine", { manifest: manifest("fine"), files: { "index.mjs": registerEntry(unique("fine")) } })
        writePlugin(instance, "bad", { manifest: "{ not json" })
        const names = ["fine", "bad", "gone"]
        const started = yield* startLoader(root, { instanceRoot: instance, enabled: names, licensed: names })
        const report = yield* started.generations.current
        const text = JSON.stringify(Schema.encodeSync(LoadReport)(report))
        const back = Schema.decodeUnknownSync(LoadReport)(JSON.parse(text))
        expect(back).toEqual(report)
        expect(Pretty.make(LoadReport)(report)).toBe("generation 1 ready: 1 loaded, 1 skipped (bad), 1 missing (gone)")
        expect(logs.filter((l) => l.message.startsWith("plugin generation")).map((l) => [l.level, l.message])).toEqual([
          ["DEBUG", "plugin generation 1 ready: 1 loaded, 1 skipped (bad), 1 missing (gone)"]
        ])
      })
    ).pipe(Logger.withMinimumLogLevel(LogLevel.Debug))))
})

describe("joint and sweep reports you can print", () => {
  const invalid = new InvalidFile({ file: "/root/peers/eve.json", field: "runtimes", rule: "must be an array", faults: [{ field: "runtimes", rule: "must be an array" }], reason: "PeerFile" })
  const outcome = (state: "ok" | "failed", personality: string) => ({
    capability: "stat",
    personality,
    runtime: "claude",
    occasion: "sweep-on" as const,
    state,
    ms: 12,
    ...(state === "failed" ? { exit: 3, detail: "no such file" } : {})
  })

  it("a joint's report, an invalid file in it, encodes to plain JSON and back, and says itself in one line", () => {
    const report: JointReport = { outcomes: [outcome("ok", "ada"), outcome("failed", "bob"), outcome("ok", "cy")], invalid: [invalid], verdict: "failed" }
    const plain = JSON.parse(JSON.stringify(Schema.encodeSync(JointReport)(report))) as { invalid: ReadonlyArray<Record<string, unknown>> }
    expect(plain.invalid[0]).toMatchObject({ _tag: "InvalidFile", file: "/root/peers/eve.json", field: "runtimes" })
    const back = Schema.decodeUnknownSync(JointReport)(plain)
    expect(back.invalid[0]).toBeInstanceOf(InvalidFile)
    expect(back.outcomes).toEqual(report.outcomes)
    expect(Pretty.make(JointReport)(report)).toBe("failed: 3 endpoints: 1 failed, 2 ok; 1 invalid file")
  })

  it("a sweep's report names how many hosts it reached", () => {
    const report: SweepReport = {
      outcomes: [{ host: "north", ...outcome("ok", "ada") }, { host: "south", ...outcome("ok", "ada") }],
      invalid: [],
      verdict: "ok"
    }
    const back = Schema.decodeUnknownSync(SweepReport)(JSON.parse(JSON.stringify(Schema.encodeSync(SweepReport)(report))))
    expect(back).toEqual(report)
    expect(Pretty.make(SweepReport)(report)).toBe("ok: 2 endpoints on 2 hosts: 2 ok")
  })
})
