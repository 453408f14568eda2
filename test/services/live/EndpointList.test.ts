/**
 * The daemon's endpoint list (docs/live-application.md, "Fingerprints"), on the real file system:
 * asked again with nothing changed, the peer files are not read again (the same array is the
 * answer); a peer file added, edited in place (the folder's mtime unchanged) or removed is read at a
 * later ask; a folder that does not exist yet is not read again while it is absent, is read once it
 * exists, and watched from then on.
 */
import { expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { utimesSync, statSync } from "node:fs"
import { join } from "node:path"
import type { EndpointRef } from "../../../src/services/live/EndpointHost.ts"
import * as EndpointList from "../../../src/services/live/EndpointList.ts"
import { eventually } from "../../fixtures.ts"

const refOf = (name: string): EndpointRef => ({
  personality: name,
  runtime: "claude",
  identity: `claude-${name}`,
  cwd: "/nowhere",
  privateDir: Option.none()
})

/** A folder of `<name>` files and a list over it that counts its reads. */
const setup = (create: boolean) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const base = yield* fs.makeTempDirectoryScoped({ prefix: "city-endpoint-list-" })
    const folder = join(base, "peers")
    if (create) yield* fs.makeDirectory(folder)
    let reads = 0
    const read = Effect.gen(function*() {
      reads++
      const names = yield* Effect.orElseSucceed(fs.readDirectory(folder), () => [])
      const refs: Array<EndpointRef> = []
      for (const name of [...names].sort()) refs.push(refOf(`${name}:${yield* fs.readFileString(join(folder, name))}`))
      return refs
    }).pipe(Effect.orDie)
    const list = yield* EndpointList.make(read, folder, Duration.hours(1))
    return { fs, folder, list, reads: () => reads }
  })

const names = (refs: ReadonlyArray<EndpointRef>) => refs.map((r) => r.personality)

it.scopedLive("with nothing changed the peer files are read once; an add, an in-place edit and a removal are read again", () =>
  Effect.gen(function*() {
    const { fs, folder, list, reads } = yield* setup(true)
    yield* fs.writeFileString(join(folder, "a"), "1")
    const first = yield* list
    expect(names(first)).toEqual(["a:1"])
    // The watch is running once an event it sees marks the list: wait for that with a throwaway file.
    yield* fs.writeFileString(join(folder, "probe"), "x")
    yield* eventually(Effect.map(list, (refs) => names(refs).includes("probe:x")))
    yield* fs.remove(join(folder, "probe"))
    yield* eventually(Effect.map(list, (refs) => !names(refs).includes("probe:x")))
    const settled = yield* list
    const before = reads()
    for (let i = 0; i < 20; i++) expect(yield* list).toBe(settled)
    expect(reads()).toBe(before)

    // Edited in place, the folder's mtime kept: only the watch can tell.
    const mtime = statSync(folder).mtime
    yield* fs.writeFileString(join(folder, "a"), "2")
    utimesSync(folder, mtime, mtime)
    yield* eventually(Effect.map(list, (refs) => names(refs).includes("a:2")))

    yield* fs.writeFileString(join(folder, "b"), "1")
    yield* eventually(Effect.map(list, (refs) => names(refs).includes("b:1")))
    yield* fs.remove(join(folder, "b"))
    yield* eventually(Effect.map(list, (refs) => !names(refs).some((n) => n.startsWith("b:"))))
  }).pipe(Effect.provide(NodeContext.layer)))

it.scopedLive("a folder that does not exist yet is not read again while absent, then read and watched once it exists", () =>
  Effect.gen(function*() {
    const { fs, folder, list, reads } = yield* setup(false)
    expect(yield* list).toEqual([])
    const before = reads()
    yield* list
    yield* list
    expect(reads()).toBe(before)
    yield* fs.makeDirectory(folder)
    yield* fs.writeFileString(join(folder, "a"), "1")
    yield* eventually(Effect.map(list, (refs) => names(refs).includes("a:1")))
    // Watched from now on: the mtime kept, an in-place edit is still seen.
    const mtime = statSync(folder).mtime
    yield* fs.writeFileString(join(folder, "a"), "2")
    utimesSync(folder, mtime, mtime)
    yield* eventually(Effect.map(list, (refs) => names(refs).includes("a:2")))
  }).pipe(Effect.provide(NodeContext.layer)))
