import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { join } from "node:path"
import * as StateRoot from "../../src/services/capabilities/StateRoot.ts"

const withRoot = <A>(
  body: (root: string) => Effect.Effect<A, unknown, FileSystem.FileSystem | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = join(yield* fs.makeTempDirectoryScoped(), "root")
    return yield* body(root)
  }).pipe(Effect.provide(NodeContext.layer))

describe("StateRoot", () => {
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
        expect((yield* Effect.flip(Effect.scoped(first.lock)))._tag).toBe("RootNotFound")
        yield* first.ensure
        const held = yield* Scope.make()
        yield* Scope.extend(first.lock, held)
        const refused = yield* Effect.scoped(second.lock).pipe(Effect.flip)
        expect(refused._tag).toBe("RootLockBusy")
        yield* Scope.close(held, Exit.void)
        const after = yield* Effect.exit(Effect.scoped(second.lock))
        expect(after._tag).toBe("Success")
      }).pipe(Effect.provide(NodeContext.layer))
    ))
})
