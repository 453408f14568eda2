/**
 * Watching the launch-read files (docs/live-application.md, "Fingerprints"), on the real file
 * system: the fingerprint watcher runs with its safety poll an hour away, so every difference here
 * is seen through watching alone. Example edits first (in place, rename-over, delete, a folder that
 * appears later, a folder replaced, the working directory itself replaced), then a property over
 * random sequences of them: after each edit the stored baseline comes to equal the disk (no change
 * is missed), each edit owes at least one reload and at most one per state the disk passed through
 * (an atomic edit, such as an editor's rename-over save, owes exactly one), and a full poll at the
 * end finds nothing left.
 *
 * On failure fast-check prints `seed` and `path`; replay with
 * `CITY_PROP_SEED=<seed> CITY_PROP_PATH=<path> npx vitest run test/services/live/LaunchFileWatch.test.ts`.
 */
import { expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import { dirname, join } from "node:path"
import { Peers } from "../../../src/services/capabilities/Peers.ts"
import { RuntimeProfiles } from "../../../src/services/capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../../../src/services/root/StateRoot.ts"
import type { EndpointRef } from "../../../src/services/live/EndpointHost.ts"
import { makeRefs } from "../../../src/services/live/Endpoints.ts"
import * as FingerprintPoll from "../../../src/services/live/FingerprintPoll.ts"
import { launchFiles } from "../../../src/services/live/LaunchFiles.ts"
import { Reloads } from "../../../src/services/owed/Reloads.ts"
import * as ScriptedHost from "../../../src/services/live/ScriptedHost.ts"
import { seedPeer } from "../../acceptance/cityCli.ts"
import { eventually } from "../../fixtures.ts"
import { scriptedLayer, world } from "../../support/world.ts"

const seed = process.env["CITY_PROP_SEED"]
const path = process.env["CITY_PROP_PATH"]
const replay = seed === undefined ? {} : { seed: Number(seed), ...(path === undefined ? {} : { path }) }

/** alice with claude and opencode, both idle, the watcher running with its poll an hour away, every baseline adopted. */
const watched = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const w = yield* world
  yield* seedPeer(w.root, "alice", w.work, ["claude", "opencode"])
  const s = yield* ScriptedHost.make
  yield* s.set("claude-alice", "idle")
  yield* s.set("opencode-alice", "idle")
  // The live services over the scripted host, built once for the test's Scope.
  const services = yield* Layer.build(scriptedLayer(w, s.host))
  const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, services)
  const refs = yield* provided(Effect.gen(function*() {
    const made = makeRefs(yield* RuntimeProfiles, yield* Peers, yield* StateRoot)
    const alice = yield* (yield* Peers).get("alice")
    return [made.of(alice, "claude"), made.of(alice, "opencode")] as const
  }))
  const [claude, opencode] = refs
  yield* fs.makeDirectory(Option.getOrThrow(opencode.privateDir), { recursive: true })
  yield* Effect.forkScoped(
    provided(FingerprintPoll.run({ interval: "50 millis", poll: "1 hour" })).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
  )
  yield* eventually(Effect.map(
    Effect.all(refs.map((ref) => fs.exists(join(w.root, "state", "fingerprints", `${ref.identity}.json`)))),
    (all) => all.every(Boolean)
  ))

  /** How many reloads the endpoint was owed so far. */
  const owed = (ref: EndpointRef) =>
    provided(Effect.map(Effect.flatMap(Reloads, (r) => r.get(ref)), (record) => Option.match(record, { onNone: () => 0, onSome: (r) => r.requested })))

  /** Whether the stored baseline is what the disk holds now, file by file. */
  const settled = (ref: EndpointRef) =>
    provided(Effect.gen(function*() {
      const stored = JSON.parse(yield* fs.readFileString(join(w.root, "state", "fingerprints", `${ref.identity}.json`))) as {
        readonly files: Record<string, { readonly hash?: string }>
      }
      const files = yield* launchFiles((yield* RuntimeProfiles).config, ref)
      const paths = new Set([...files, ...Object.keys(stored.files)])
      for (const file of paths) {
        const now = yield* Effect.either(fs.readFile(file))
        const hash = now._tag === "Right" ? createHash("sha256").update(now.right).digest("hex") : undefined
        if (stored.files[file]?.hash !== hash) return false
      }
      return true
    }))

  return { fs, w, claude, opencode, owed, settled, provided }
})

const live = (name: string, body: () => Effect.Effect<void, unknown, FileSystem.FileSystem | Scope.Scope>, timeout = 120_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(NodeContext.layer)), timeout)

let unique = 0
const content = (label: string) => `{"edit":"${label}-${++unique}"}\n`

/** Writes through a temporary file renamed over the target, as editors save. */
const renameOver = (fs: FileSystem.FileSystem, file: string, text: string) =>
  Effect.zipRight(fs.writeFileString(`${file}.tmp`, text), fs.rename(`${file}.tmp`, file))

live("each kind of edit is seen through watching alone, and owes its reload", () =>
  Effect.gen(function*() {
    const { claude, fs, opencode, owed, settled, w } = yield* watched
    const mcp = join(w.work, ".mcp.json")
    const settings = join(w.work, ".claude", "settings.json")
    const seen = (ref: EndpointRef, count: number) =>
      Effect.zipRight(eventually(settled(ref)), Effect.flatMap(owed(ref), (n) => Effect.sync(() => expect(n).toBeGreaterThanOrEqual(count))))

    yield* renameOver(fs, mcp, content("a")) // a file that did not exist, saved by rename
    yield* seen(claude, 1)
    expect(yield* owed(claude)).toBe(1) // atomic: exactly one
    yield* fs.writeFileString(mcp, content("b")) // in place
    yield* seen(claude, 2)
    yield* fs.remove(mcp)
    yield* seen(claude, 3)
    // A folder that did not exist when the watch began.
    const before = yield* owed(claude)
    yield* fs.makeDirectory(join(w.work, ".claude"))
    yield* renameOver(fs, settings, content("c"))
    yield* seen(claude, before + 1)
    // That folder replaced by another under its name: the new one is watched.
    const aside = join(w.base, "claude-new")
    yield* fs.makeDirectory(aside)
    yield* fs.writeFileString(join(aside, "settings.json"), content("d"))
    yield* fs.remove(join(w.work, ".claude"), { recursive: true })
    yield* fs.rename(aside, join(w.work, ".claude"))
    const replaced = yield* owed(claude)
    yield* seen(claude, before + 2)
    yield* renameOver(fs, settings, content("e"))
    yield* seen(claude, replaced + 1)
    // The working directory itself deleted and made again.
    yield* fs.remove(w.work, { recursive: true })
    yield* fs.makeDirectory(join(w.work, ".claude"), { recursive: true })
    yield* renameOver(fs, mcp, content("f"))
    yield* eventually(settled(claude))
    const remade = yield* owed(claude)
    yield* renameOver(fs, settings, content("g"))
    yield* seen(claude, remade + 1)
    // A pattern file in the private directory (opencode's `*.json`), and a name the pattern excludes.
    const tool = join(Option.getOrThrow(opencode.privateDir), "tool.json")
    const opencodeBefore = yield* owed(opencode)
    yield* renameOver(fs, tool, content("h"))
    yield* seen(opencode, opencodeBefore + 1)
  }))

type Step =
  | { readonly _tag: "InPlace"; readonly file: number }
  | { readonly _tag: "RenameOver"; readonly file: number }
  | { readonly _tag: "Remove"; readonly file: number }
  | { readonly _tag: "ReplaceFolder"; readonly file: number }
  | { readonly _tag: "MoveFolderIn"; readonly file: number }

const file = FastCheck.integer({ min: 0, max: 3 })
const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  FastCheck.record({ _tag: FastCheck.constant("InPlace" as const), file }),
  FastCheck.record({ _tag: FastCheck.constant("RenameOver" as const), file }),
  FastCheck.record({ _tag: FastCheck.constant("Remove" as const), file }),
  FastCheck.record({ _tag: FastCheck.constant("ReplaceFolder" as const), file: FastCheck.integer({ min: 1, max: 3 }) }),
  FastCheck.record({ _tag: FastCheck.constant("MoveFolderIn" as const), file: FastCheck.integer({ min: 1, max: 3 }) })
)

live("property: random edit sequences are never missed, and owe one reload per state the disk passed through at most", () =>
  Effect.gen(function*() {
    const { claude, fs, opencode, owed, provided, settled, w } = yield* watched
    const privateDir = Option.getOrThrow(opencode.privateDir)
    // 0: <cwd>/.mcp.json (both endpoints), 1: <cwd>/.claude/settings.json (claude), 2 and 3: opencode's patterns.
    const files = [join(w.work, ".mcp.json"), join(w.work, ".claude", "settings.json"), join(privateDir, "tool.json"), join(privateDir, "hook.mjs")]
    const readers = (index: number): ReadonlyArray<EndpointRef> => index === 0 ? [claude, opencode] : index === 1 ? [claude] : [opencode]
    const exists = (target: string) => fs.exists(target)

    /** Carries out a step; the most states the disk passes through for its endpoints (each may owe one). */
    const apply = (s: Step) =>
      Effect.gen(function*() {
        const target = files[s.file]!
        const folder = dirname(target)
        switch (s._tag) {
          case "InPlace":
            yield* fs.makeDirectory(folder, { recursive: true })
            yield* fs.writeFileString(target, content("in-place"))
            return 2 // truncated, then written
          case "RenameOver":
            yield* fs.makeDirectory(folder, { recursive: true })
            yield* renameOver(fs, target, content("rename"))
            return 1
          case "Remove":
            if (!(yield* exists(target))) {
              yield* fs.makeDirectory(folder, { recursive: true })
              yield* renameOver(fs, target, content("instead-of-remove"))
              return 1
            }
            yield* fs.remove(target)
            return 1
          case "ReplaceFolder": {
            // Every file of the folder goes, then the folder comes back with only this one.
            yield* fs.remove(folder, { recursive: true }).pipe(Effect.ignore)
            yield* fs.makeDirectory(folder, { recursive: true })
            yield* fs.writeFileString(target, content("replaced"))
            return 4 // files gone (one at a time: two for the private directory), empty, written
          }
          case "MoveFolderIn": {
            const aside = `${folder}.new`
            yield* fs.remove(aside, { recursive: true }).pipe(Effect.ignore)
            yield* fs.makeDirectory(aside, { recursive: true })
            yield* fs.writeFileString(join(aside, target.slice(folder.length + 1)), content("moved"))
            yield* fs.remove(folder, { recursive: true }).pipe(Effect.ignore)
            yield* fs.rename(aside, folder)
            return 3 // files gone (one at a time), then the new folder
          }
        }
      })

    const runtime = yield* Effect.runtime<FileSystem.FileSystem>()
    const property = FastCheck.asyncProperty(FastCheck.array(step, { minLength: 1, maxLength: 6 }), (steps) =>
      Runtime.runPromise(runtime)(Effect.gen(function*() {
        for (const s of steps) {
          const endpoints = readers(s.file)
          const before = yield* Effect.forEach(endpoints, owed)
          const most = yield* apply(s)
          yield* Effect.forEach(endpoints, (ref) => eventually(settled(ref)), { discard: true })
          const after = yield* Effect.forEach(endpoints, owed)
          endpoints.forEach((ref, i) => {
            const count = after[i]! - before[i]!
            expect(count, `${s._tag} of ${files[s.file]} owed ${ref.identity} ${count} reload(s)`).toBeGreaterThanOrEqual(1)
            expect(count, `${s._tag} of ${files[s.file]} owed ${ref.identity} ${count} reload(s)`).toBeLessThanOrEqual(most)
          })
        }
      })))
    yield* Effect.promise(() => FastCheck.assert(property, { numRuns: 12, ...replay }))
    // Nothing left for a full poll by content.
    expect(yield* provided(FingerprintPoll.check([claude, opencode], { byContent: true }))).toEqual([])
  }), 300_000)
