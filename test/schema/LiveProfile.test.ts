/**
 * The live-application fields of a runtime profile (src/schema/LiveProfile.ts): a launch file is a
 * template starting with `{cwd}/`, `{privateDir}/` or `/`, with `*` in its last path segment only;
 * `host` is `commands` or `city`; the spec's default tables follow the same rules.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { defaultLaunchFiles, LiveProfileFields } from "../../src/schema/LiveProfile.ts"
import { anyText, holds } from "./strings.ts"

const Profile = Schema.Struct(LiveProfileFields)
const decodes = (value: unknown) => Either.isRight(Schema.decodeUnknownEither(Profile)(value))

/** The template rule as the doc comment words it. */
const byTheRule = (template: string) => {
  const rooted = ["{cwd}/", "{privateDir}/", "/"].some((start) => template.startsWith(start))
  const segments = template.split("/")
  return rooted && segments.slice(0, -1).every((segment) => !segment.includes("*"))
}

/** Paths made of the pieces the rule is about, and any text. */
const template = FastCheck.oneof(
  FastCheck.tuple(
    FastCheck.constantFrom("{cwd}/", "{privateDir}/", "/", "", "{cwd}", "{CWD}/", "./", "\ufeff/", "{privateDir}"),
    FastCheck.array(FastCheck.oneof(FastCheck.constantFrom("*", "*.json", "a", "..", "", "é", "\u0000"), anyText), { maxLength: 4 })
  ).map(([start, segments]) => start + segments.join("/")),
  anyText
)

describe("LiveProfile", () => {
  it("a launch file is accepted exactly when it is rooted and has * in its last segment only", () =>
    holds([template], (t) => expect(decodes({ launch_files: [t] })).toBe(byTheRule(t))))

  it("one refused template refuses the list, wherever it is", () =>
    holds([FastCheck.array(template, { maxLength: 5 })], (ts) => expect(decodes({ launch_files: ts })).toBe(ts.every(byTheRule))))

  it("host is commands or city, nothing else", () =>
    holds([FastCheck.oneof(anyText, FastCheck.constantFrom("commands", "city", "City", "commands ", "\ufeffcity"))], (host) =>
      expect(decodes({ host })).toBe(host === "commands" || host === "city")))

  it("the spec's default launch files follow the rule", () => {
    for (const [runtime, files] of Object.entries(defaultLaunchFiles)) {
      expect([runtime, decodes({ launch_files: files })]).toEqual([runtime, true])
    }
  })
})
