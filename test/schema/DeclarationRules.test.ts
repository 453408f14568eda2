/**
 * docs/cli.md, "Declaration rules", states every rule a declaration must meet, and nothing else:
 * each rule of `DeclarationRules.ts` (its fields and its sentence) is one bullet of that list, each
 * bullet one rule, and each rule's sentence is what a declaration breaking it is told (an example
 * per rule, decoded as `register` decodes a file).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { declarationRules, type DeclarationRuleId } from "../../src/schema/DeclarationRules.ts"
import { validate } from "../../src/services/capabilities/internal/capabilities.ts"

const cli = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8")

/** The bullets of docs/cli.md's "Declaration rules" list, each with the fields it names in backticks before its first ": ". */
const bullets = (() => {
  const start = cli.indexOf("\n## Declaration rules\n")
  const end = cli.indexOf("\n## ", start + 1)
  const section = cli.slice(start, end === -1 ? undefined : end)
  return section.split("\n").filter((line) => line.startsWith("- ")).map((text) => {
    const head = text.slice(2, text.indexOf(": "))
    return { text, fields: Array.from(head.matchAll(/`([^`]+)`/g), (m) => m[1] ?? "") }
  })
})()

const rules = Object.entries(declarationRules) as ReadonlyArray<
  readonly [DeclarationRuleId, { readonly fields: ReadonlyArray<string>; readonly sentence: string }]
>

/** Whether a bullet states a rule: it names exactly the rule's fields and carries its sentence. */
const states = (bullet: (typeof bullets)[number], rule: (typeof rules)[number][1]) =>
  bullet.text.includes(rule.sentence) &&
  bullet.fields.length === rule.fields.length && rule.fields.every((field) => bullet.fields.includes(field))

describe("docs/cli.md's declaration rules are the code's", () => {
  it("the section exists and lists one bullet per rule", () => {
    expect(bullets.length).toBeGreaterThan(0)
    expect(bullets.length).toBe(rules.length)
  })

  it("every rule of the code is stated by exactly one bullet (its fields and its sentence)", () => {
    for (const [id, rule] of rules) {
      expect(bullets.filter((b) => states(b, rule)).map((b) => b.text), `rule ${id}`).toHaveLength(1)
    }
  })

  it("every bullet states exactly one rule of the code: the list has no rule the code lacks", () => {
    for (const bullet of bullets) {
      expect(rules.filter(([, rule]) => states(bullet, rule)).map(([id]) => id), bullet.text).toHaveLength(1)
    }
  })

  it("the spec's own rules are among them: {personality} in both commands' args, the file stem", () => {
    expect(declarationRules.personality.fields).toEqual(["provision.args", "unprovision.args"])
    expect(cli).toContain("must carry {personality}: several personalities can share one cwd")
    expect(cli).toContain("`capability`: must equal the file stem")
  })
})

const valid = {
  schema: 1,
  capability: "stat",
  package: "@x/stat",
  version: "1.0.0",
  runtimes: ["claude", "codex"],
  provision: { command: "/abs/bin", args: ["provision", "{personality}", "{runtime}"] },
  unprovision: { command: "/abs/bin", args: ["unprovision", "{personality}"] }
}
const provision = (fields: Record<string, unknown>) => ({ ...valid, provision: { ...valid.provision, ...fields } })

/** A declaration (its text) breaking each rule, and only that one where it can. */
const examples: Record<DeclarationRuleId, string> = {
  json: "{ \"schema\": 1,",
  object: "[]",
  required: JSON.stringify({ ...valid, provision: { command: "/abs/bin" } }),
  types: JSON.stringify({ ...valid, runtimes: [7] }),
  knownFields: JSON.stringify({ ...valid, unprovison: {} }),
  schema: JSON.stringify({ ...valid, schema: 2 }),
  name: JSON.stringify({ ...valid, runtimes: ["Claude"] }),
  stem: JSON.stringify({ ...valid, capability: "other" }),
  nonEmptyString: JSON.stringify({ ...valid, version: "" }),
  printable: JSON.stringify({ ...valid, version: "1.0\u001b[31m" }),
  runtimesNonEmpty: JSON.stringify({ ...valid, runtimes: [] }),
  runtimesDistinct: JSON.stringify({ ...valid, runtimes: ["claude", "claude"] }),
  agentRuntimes: JSON.stringify({ ...valid, runtimes: ["claude", "telegram"] }),
  noNul: JSON.stringify(provision({ args: ["{personality}", "a\u0000b"] })),
  absoluteCommand: JSON.stringify(provision({ command: "bin/prov" })),
  commandWithoutPlaceholders: JSON.stringify(provision({ command: "/abs/{runtime}" })),
  knownPlaceholders: JSON.stringify(provision({ args: ["{personality}", "{peer}"] })),
  personality: JSON.stringify(provision({ args: ["{runtime}"] }))
}

/** A fault's field is the rule's (a list's item counts as its list: `runtimes[1]` is `runtimes`). */
const inFields = (field: string, fields: ReadonlyArray<string>) =>
  fields.length === 0 || fields.some((f) => field === f || field.startsWith(`${f}[`))

describe("each rule's sentence is what a declaration breaking it is told", () => {
  for (const [id, rule] of rules) {
    it.effect(`${id}: ${rule.sentence}`, () =>
      Effect.gen(function*() {
        const refused = yield* Effect.flip(validate("/decl/stat.json", "stat", examples[id]))
        expect(refused.faults.some((f) => inFields(f.field, rule.fields) && f.rule.includes(rule.sentence)), refused.message)
          .toBe(true)
      }))
  }
})
