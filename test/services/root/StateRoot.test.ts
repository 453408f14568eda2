import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { join } from "node:path"
import * as StateRoot from "../../../src/services/root/StateRoot.ts"
import { blocked, eventually } from "../../fixtures.ts"

const withRoot = <A>(
  body: (root: string) => Effect.Effect<A, unknown, FileSystem.FileSystem | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = join(yield* fs.makeTempDirectoryScoped(), "root")
    return yield* body(root)
  }).pipe(Effect.provide(NodeContext.layer))

describe("StateRoot", () => {
  it.scoped("layerShared takes the StateRoot the application gives on the same root, and builds its own on another", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const given = yield* StateRoot.make({ root })
        const shared = (on: string) =>
          Effect.provide(StateRoot.StateRoot, StateRoot.layerShared({ root: on })).pipe(
            Effect.provideService(StateRoot.StateRoot, given)
          )
        expect(yield* shared(root)).toBe(given)
        const other = yield* shared(join(root, "other"))
        expect(other).not.toBe(given)
        expect(other.root).toBe(join(root, "other"))
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scoped("writes JSON atomically: the file holds the whole document and no temp file is left", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const state = yield* StateRoot.make({ root })
        yield* state.writeJson("peers/alice.json", { a: 1 })
        yield* state.writeJson("peers/alice.json", { a: 2, b: "x" })
        expect(JSON.parse(yield* fs.readFileString(join(root, "peers", "alice.json")))).toEqual({ a: 2, b: "x" })
        expect(yield* fs.readDirectory(join(root, "peers"))).toEqual(["alice.json"])
        expect(yield* state.readText("peers/bob.json")).toEqual(Option.none())
        expect(yield* state.list("nothing-here")).toEqual([])
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scopedLive("the root lock is exclusive: a second holder waits, and gives up with RootLockBusy", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const first = yield* StateRoot.make({ root })
        const second = yield* StateRoot.make({ root, lockWait: "300 millis" })
        expect(yield* Effect.flip(Effect.scoped(first.lock))).toMatchObject({ _tag: "StateRootError", reason: "RootNotFound" })
        yield* first.ensure
        const held = yield* Scope.make()
        yield* Scope.extend(first.lock, held)
        const refused = yield* Effect.scoped(second.lock).pipe(Effect.flip)
        expect(refused).toMatchObject({ _tag: "StateRootError", reason: "RootLockBusy" })
        yield* Scope.close(held, Exit.void)
        const after = yield* Effect.exit(Effect.scoped(second.lock))
        expect(after._tag).toBe("Success")
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scopedLive("a waiter is told once, after a second, who holds the lock; it takes the lock when it is let go", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const notices: Array<string> = []
        const first = yield* StateRoot.make({ root })
        const second = yield* StateRoot.make({ root, lockNotice: (text) => Effect.sync(() => void notices.push(text)) })
        yield* first.ensure
        const held = yield* Scope.make()
        yield* Scope.extend(first.lock, held)
        const waiter = yield* Effect.fork(Effect.scoped(second.lock))
        yield* eventually(Effect.sync(() => notices.length > 0))
        expect(notices).toEqual([
          expect.stringMatching(new RegExp(`^waiting for the state-root lock held by pid ${process.pid} \\(since \\d{4}-\\d\\d-\\d\\dT`))
        ])
        yield* Scope.close(held, Exit.void)
        expect((yield* Fiber.await(waiter))._tag).toBe("Success")
        expect(notices.length).toBe(1)
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scopedLive("a wait for the lock is interruptible", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const first = yield* StateRoot.make({ root })
        const second = yield* StateRoot.make({ root })
        yield* first.ensure
        const held = yield* Scope.make()
        yield* Scope.extend(first.lock, held)
        const waiter = yield* Effect.fork(Effect.scoped(second.lock))
        yield* blocked(waiter)
        // The default wait is 10 minutes: interrupting it must not wait for that.
        expect(Exit.isInterrupted(yield* Fiber.interrupt(waiter))).toBe(true)
        yield* Scope.close(held, Exit.void)
      }).pipe(Effect.provide(NodeContext.layer))
    ))

  it.scopedLive("a lock held past its 2 s refresh is not taken for compromised, and its release removes it", () =>
    withRoot((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const warnings: Array<string> = []
        const logger = Logger.make(({ message }) => void warnings.push(String(message)))
        // The refresh is proper-lockfile's `utimes` of the lock directory, on its own 2 s timer.
        let refreshes = 0
        const counting: FileSystem.FileSystem = {
          ...fs,
          utimes: (path, atime, mtime) => Effect.zipLeft(fs.utimes(path, atime, mtime), Effect.sync(() => void refreshes++))
        }
        const state = yield* Effect.provideService(StateRoot.make({ root }), FileSystem.FileSystem, counting)
        yield* state.ensure
        yield* Effect.scoped(Effect.zipRight(state.lock, eventually(Effect.sync(() => refreshes >= 1)))).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        expect(warnings).toEqual([])
        expect(yield* fs.readDirectory(root)).toEqual([])
      }).pipe(Effect.provide(NodeContext.layer))
    ), 20_000)
})
