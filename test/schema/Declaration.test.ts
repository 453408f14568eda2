import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { validate } from "../../src/services/capabilities/internal/capabilities.ts"

const valid = {
  schema: 1,
  capability: "statusline-injector",
  package: "@agfpd/statusline-injector",
  version: "1.2.3",
  runtimes: ["claude", "codex", "opencode"],
  provision: { command: "/abs/bin", args: ["provision-peer", "--personality", "{personality}", "--cwd={cwd}"] },
  unprovision: { command: "/abs/bin", args: ["unprovision-peer", "--personality", "{personality}", "{occasion}"] }
}

const check = (value: unknown, stem = "statusline-injector") =>
  validate("/decl/statusline-injector.json", stem, JSON.stringify(value)).pipe(Effect.flip)

describe("declaration rules", () => {
  it.effect("the spec's example declaration is valid", () =>
    Effect.gen(function*() {
      const declaration = yield* validate("/d/statusline-injector.json", "statusline-injector", JSON.stringify(valid))
      expect(declaration).toEqual(valid)
    }))

  const rules: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["schema is 1", { ...valid, schema: "1" }, "schema", "must be 1"],
    ["capability is a name", { ...valid, capability: "../etc" }, "capability", "must be 1-64"],
    ["capability equals the stem", { ...valid, capability: "other" }, "capability", "file stem"],
    ["runtimes non-empty", { ...valid, runtimes: [] }, "runtimes", "non-empty"],
    ["runtimes without repeats", { ...valid, runtimes: ["claude", "claude"] }, "runtimes", "twice"],
    ["runtimes is a list", { ...valid, runtimes: "claude" }, "runtimes", "Expected ReadonlyArray"],
    ["command absolute", { ...valid, provision: { ...valid.provision, command: "./bin" } }, "provision.command", "absolute"],
    ["command without placeholders", {
      ...valid,
      provision: { ...valid.provision, command: "/x/{runtime}" }
    }, "provision.command", "placeholders"],
    ["args strings", { ...valid, unprovision: { ...valid.unprovision, args: ["{personality}", null] } }, "unprovision.args[1]", "Expected string"],
    ["args carry {personality}", { ...valid, provision: { ...valid.provision, args: ["--x"] } }, "provision.args", "{personality}"],
    ["known placeholders only", {
      ...valid,
      unprovision: { ...valid.unprovision, args: ["{personality}", "{peer}"] }
    }, "unprovision.args", "{peer}"],
    ["no NUL", { ...valid, provision: { ...valid.provision, args: ["{personality}", "a\u0000b"] } }, "provision.args[1]", "NUL"],
    ["args present", { ...valid, provision: { command: "/abs/bin" } }, "provision.args", "is missing"],
    ["no unknown fields", { ...valid, extra: true }, "extra", "not a known field"],
    ["version non-empty", { ...valid, version: "" }, "version", "non-empty"]
  ]
  for (const [rule, value, field, words] of rules) {
    it.effect(`refuses: ${rule} (field ${field})`, () =>
      Effect.gen(function*() {
        const error = yield* check(value)
        expect(error).toMatchObject({ _tag: "InvalidFile", reason: "Declaration" })
        expect(error.field).toBe(field)
        expect(error.rule).toContain(words)
        expect(error.message).toContain("/decl/statusline-injector.json")
        expect(error.message).toContain(`field "${field}"`)
      }))
  }

  it.effect("refuses text that is not a JSON object", () =>
    Effect.gen(function*() {
      const notJson = yield* validate("/d/x.json", "x", "{").pipe(Effect.flip)
      expect(notJson.rule).toContain("not valid JSON")
      const array = yield* validate("/d/x.json", "x", "[]").pipe(Effect.flip)
      expect(array.rule).toContain("JSON object")
    }))
})
