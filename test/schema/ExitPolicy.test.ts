/**
 * The CLI's exit policy (src/schema/ExitPolicy.ts, docs/cli.md "Exit codes"): refused input
 * exits 2, everything else 1; the table is keyed by the tags of errors that exist, and an error
 * whose tag it does not list cannot be given to `exitCodeOf`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ClassifiedTag, exitCodeOf, refused, refusedByTag } from "../../src/schema/ExitPolicy.ts"

const src = fileURLToPath(new URL("../../src", import.meta.url))

/** The tags of every `Schema.TaggedError` declared in src/. */
const declaredTags = (): Set<string> => {
  const tags = new Set<string>()
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".ts")) {
        for (const m of readFileSync(path, "utf8").matchAll(/TaggedError<\w+>\(\)\(\s*"(\w+)"/g)) tags.add(m[1]!)
      }
    }
  }
  walk(src)
  return tags
}

const tags = Object.keys(refusedByTag) as Array<ClassifiedTag>

describe("ExitPolicy", () => {
  it("every tag the table classifies is the tag of an error declared in src/", () => {
    const declared = declaredTags()
    expect(tags.filter((tag) => !declared.has(tag))).toEqual([])
  })

  it("refused input exits 2, anything else 1", () => {
    for (const tag of tags) expect(exitCodeOf({ _tag: tag }), tag).toBe(refused({ _tag: tag }) ? 2 : 1)
    expect(new Set(tags.map((tag) => exitCodeOf({ _tag: tag })))).toEqual(new Set([1, 2]))
  })

  it("what docs/cli.md calls refused input exits 2; the state root, its lock and the City failing exit 1", () => {
    // An invalid file, an unknown capability, peer or runtime, a name breaking the rule, a missing
    // state root, bad usage.
    for (const tag of ["InvalidFile", "UnknownCapability", "UnknownPeer", "UnknownRuntime", "InvalidName", "RootNotFound", "UsageError"] as const) {
      expect(exitCodeOf({ _tag: tag }), tag).toBe(2)
    }
    for (const tag of ["StateError", "RootLockBusy", "CityClosed", "EndpointBusy"] as const) expect(exitCodeOf({ _tag: tag }), tag).toBe(1)
  })

  it("an error the table does not list does not compile", () => {
    // @ts-expect-error: a tag the exit policy does not classify
    const unlisted = () => exitCodeOf({ _tag: "SomethingNew" })
    expect(typeof unlisted).toBe("function")
  })
})
