/**
 * The API reference's check (scripts/api-reference.ts, run on the real entry points by
 * `npm run docs:check` at the end of `npm test`) on a tiny entry point with undocumented exports.
 */
import { describe, expect, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import { TSConfigReader } from "typedoc"
import { check } from "../../scripts/api-reference.ts"

const fixture = (file: string): string => fileURLToPath(new URL(`../fixtures/api-reference/${file}`, import.meta.url))

describe("the API reference check", () => {
  it("names every export, and every interface member, without a summary, and nothing else", async () => {
    const { problems } = await check(
      {
        entryPoints: [fixture("entry.ts")],
        tsconfig: fixture("tsconfig.json"),
        readme: "none",
        skipErrorChecking: true
      },
      [new TSConfigReader()]
    )
    expect(problems.map((p) => p.replace(/^.*?fixtures\/api-reference\//, ""))).toEqual([
      "entry.ts:17: Variable onlyTags has no doc comment summary",
      "entry.ts:19: Function bare has no doc comment summary",
      "entry.ts:29: Property Shape.bare has no doc comment summary",
      "entry.ts:30: Property Shape.call has no doc comment summary",
      "entry.ts:31: Method Shape.method has no doc comment summary",
      "members.ts:8: Type Alias Members.Bare has no doc comment summary"
    ])
  }, 60_000)
})
