/**
 * `provides` enforced (docs/plugin-loader.md, "What provides covers"): a present list is
 * deny-by-default, an absent one checks nothing; `prefix*` patterns; actions ↔ tools, skills ↔
 * skills, hooks ↔ hooks; system text and availability never dropped.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { action, type Contributions } from "../../../src/services/Contributions.ts"
import * as Provides from "../../../src/services/loader/Provides.ts"

const echo = action({ input: Schema.Unknown, handler: (x) => Effect.succeed(x) })
const contributions: Contributions = {
  actions: { NoteGet: echo, NoteList: echo, Other: echo },
  hooks: { "before-turn": () => Effect.void, "after-turn": () => Effect.void },
  skills: [{ name: "notes-daily" }, { name: "stray" }],
  system: () => Effect.succeed("text"),
  availability: () => Effect.succeed({ available: true, reasons: [] })
}

describe("Provides", () => {
  it.each([
    [["NoteGet"], "NoteGet", true],
    [["Note*"], "NoteList", true],
    [["Note*"], "Other", false],
    [["*"], "anything", true],
    [[], "NoteGet", false],
    [["Note"], "NoteGet", false]
  ] as const)("covers(%j, %s) is %s", (list, name, expected) => {
    expect(Provides.covers(list, name)).toBe(expected)
  })

  it("an absent provides checks nothing", () => {
    expect(Provides.enforce(undefined, contributions)).toEqual({ contributions, dropped: [] })
  })

  it("a present list drops what it does not cover, kind by kind; system and availability stay", () => {
    const { contributions: kept, dropped } = Provides.enforce({ tools: ["Note*"], skills: ["notes-*"], hooks: ["before-turn"] }, contributions)
    expect(Object.keys(kept.actions ?? {})).toEqual(["NoteGet", "NoteList"])
    expect(Object.keys(kept.hooks ?? {})).toEqual(["before-turn"])
    expect(kept.skills).toEqual([{ name: "notes-daily" }])
    expect(kept.system).toBe(contributions.system)
    expect(kept.availability).toBe(contributions.availability)
    expect(dropped).toEqual([
      { kind: "action", name: "Other", key: "tools" },
      { kind: "hook", name: "after-turn", key: "hooks" },
      { kind: "skill", name: "stray", key: "skills" }
    ])
    expect(dropped.map((d) => Provides.warning("notes", d))).toEqual([
      "plugin notes: action \"Other\" dropped: not covered by provides.tools",
      "plugin notes: hook \"after-turn\" dropped: not covered by provides.hooks",
      "plugin notes: skill \"stray\" dropped: not covered by provides.skills"
    ])
  })

  it("a list of another kind only checks that kind; an empty list drops every contribution of its kind", () => {
    const onlyTools = Provides.enforce({ tools: [] }, contributions)
    expect(onlyTools.contributions.actions).toEqual({})
    expect(onlyTools.contributions.skills).toEqual(contributions.skills)
    expect(Provides.enforce({ platforms: ["x"], httpRoutes: ["/y"] }, contributions).dropped).toEqual([])
  })

  it("a skills reload is held to provides.skills", () => {
    expect(Provides.enforceSkills({ skills: ["a*"] }, [{ name: "alpha" }, { name: "beta" }])).toEqual({
      skills: [{ name: "alpha" }],
      dropped: [{ kind: "skill", name: "beta", key: "skills" }]
    })
    expect(Provides.enforceSkills({ tools: [] }, [{ name: "beta" }]).dropped).toEqual([])
  })
})
