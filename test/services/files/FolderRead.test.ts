/**
 * A read over several folders (files/FolderRead.ts), on the real file system: with nothing changed
 * the answer is the last one, unread; a change in any one of the folders (an in-place edit seen by
 * its watch, an add seen by its mtime), and the creation of a folder absent so far, read again.
 */
import { expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { statSync, utimesSync } from "node:fs"
import { join } from "node:path"
import * as FolderRead from "../../../src/services/files/FolderRead.ts"
import { eventually } from "../../fixtures.ts"

it.scopedLive("a change in any folder is read again; nothing changed, nothing is read; an absent folder is seen once created", () =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const base = yield* fs.makeTempDirectoryScoped({ prefix: "city-folder-read-" })
    const [a, b, c] = ["a", "b", "c"].map((name) => join(base, name)) as [string, string, string]
    yield* fs.makeDirectory(a)
    yield* fs.makeDirectory(b)
    let reads = 0
    const read = Effect.gen(function*() {
      reads++
      const out: Array<string> = []
      for (const folder of [a, b, c]) {
        const names = yield* Effect.orElseSucceed(fs.readDirectory(folder), () => [])
        for (const name of [...names].sort()) out.push(`${name}:${yield* fs.readFileString(join(folder, name))}`)
      }
      return out
    }).pipe(Effect.orDie)
    const answer = yield* FolderRead.make(read, [a, b, c], Duration.hours(1))
    yield* fs.writeFileString(join(b, "x"), "1")
    yield* eventually(Effect.map(answer, (names) => names.includes("x:1")))
    // Wait for both watches with a throwaway file in each.
    for (const folder of [a, b]) {
      yield* fs.writeFileString(join(folder, "probe"), "p")
      yield* eventually(Effect.map(answer, (names) => names.includes("probe:p")))
      yield* fs.remove(join(folder, "probe"))
      yield* eventually(Effect.map(answer, (names) => !names.includes("probe:p")))
    }
    const settled = yield* answer
    const before = reads
    for (let i = 0; i < 20; i++) expect(yield* answer).toBe(settled)
    expect(reads).toBe(before)

    // In place in the second folder, its mtime kept: only its watch can tell.
    const mtime = statSync(b).mtime
    yield* fs.writeFileString(join(b, "x"), "2")
    utimesSync(b, mtime, mtime)
    yield* eventually(Effect.map(answer, (names) => names.includes("x:2")))

    // The third folder did not exist: created with a file, it is read.
    yield* fs.makeDirectory(c)
    yield* fs.writeFileString(join(c, "y"), "1")
    yield* eventually(Effect.map(answer, (names) => names.includes("y:1")))
  }).pipe(Effect.provide(NodeContext.layer)))
