/** The README's library example compiles (it is typechecked with the tests) and runs. */
import * as FileSystem from "@effect/platform/FileSystem"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { main } from "../examples/library.ts"
import { provideNode } from "./fixtures.ts"

it.scoped("the README library example runs a Turn of two Steps", () =>
  provideNode(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped()
    const result = yield* main(root)
    expect(result.system).toEqual([{ name: "greeter", content: "Greet people by name." }])
    expect(result.reply).toBe("Hello Grace, from ada in notes")
  })))
