/**
 * The CLI's exit policy (src/schema/ExitPolicy.ts, docs/cli.md "Exit codes"): refused input
 * exits 2, everything else 1; the table is keyed by the tags of errors that exist, and an error
 * whose tag it does not list cannot be given to `exitCodeOf`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Classified, type ClassifiedTag, exitCodeOf, refused, refusedByTag } from "../../src/schema/ExitPolicy.ts"

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

/** Every error the table classifies: a tag, or a family's tag with each of its reasons. */
const classified: ReadonlyArray<Classified> = tags.flatMap((tag): ReadonlyArray<Classified> => {
  const entry: boolean | Readonly<Record<string, boolean>> = refusedByTag[tag]
  return typeof entry === "boolean"
    ? [{ _tag: tag } as Classified]
    : Object.keys(entry).map((reason) => ({ _tag: tag, reason } as Classified))
})

const named = (error: Classified): string => "reason" in error ? `${error._tag}/${String(error.reason)}` : error._tag

describe("ExitPolicy", () => {
  it("every tag the table classifies is the tag of an error declared in src/", () => {
    const declared = declaredTags()
    expect(tags.filter((tag) => !declared.has(tag))).toEqual([])
  })

  it("refused input exits 2, anything else 1", () => {
    for (const error of classified) expect(exitCodeOf(error), named(error)).toBe(refused(error) ? 2 : 1)
    expect(new Set(classified.map((error) => exitCodeOf(error)))).toEqual(new Set([1, 2]))
  })

  it("what docs/cli.md calls refused input exits 2; the state root, its lock and the City failing exit 1", () => {
    // An invalid file, an unknown capability, peer or runtime, a name breaking the rule, a missing
    // state root, bad usage.
    const two: ReadonlyArray<Classified> = [
      { _tag: "InvalidFile" },
      { _tag: "CapabilityError", reason: "UnknownCapability" },
      { _tag: "CapabilityError", reason: "UnknownPeer" },
      { _tag: "CapabilityError", reason: "UnknownRuntime" },
      { _tag: "CapabilityError", reason: "InvalidName" },
      { _tag: "StateRootError", reason: "RootNotFound" },
      { _tag: "UsageError" }
    ]
    for (const error of two) expect(exitCodeOf(error), named(error)).toBe(2)
    const one: ReadonlyArray<Classified> = [
      { _tag: "StateRootError", reason: "StateError" },
      { _tag: "StateRootError", reason: "RootLockBusy" },
      { _tag: "CityClosed" },
      { _tag: "StateRootError", reason: "EndpointBusy" }
    ]
    for (const error of one) expect(exitCodeOf(error), named(error)).toBe(1)
  })

  it("a family's reason the table does not list does not compile", () => {
    // @ts-expect-error: a reason of a family the exit policy does not classify
    const unlisted = () => exitCodeOf({ _tag: "StateRootError", reason: "SomethingNew" })
    expect(typeof unlisted).toBe("function")
  })

  it("an error the table does not list does not compile", () => {
    // @ts-expect-error: a tag the exit policy does not classify
    const unlisted = () => exitCodeOf({ _tag: "SomethingNew" })
    expect(typeof unlisted).toBe("function")
  })
})
