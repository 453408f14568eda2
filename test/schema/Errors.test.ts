/**
 * Every error prints as its tag, naming its subject once (docs/design.md "Errors and output"): a
 * field called `name` on a `Schema.TaggedError` would replace `Error.name`, so the stack's first
 * line and `Cause.pretty` would print the plugin's name where the tag belongs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as City from "../../src/City.ts"
import * as Plugin from "../../src/services/Plugin.ts"
import * as Errors from "../../src/schema/Errors.ts"
import * as LoaderErrors from "../../src/schema/LoaderErrors.ts"
import * as CapabilityErrors from "../../src/schema/CapabilityErrors.ts"
import * as Faults from "../../src/schema/Faults.ts"
import * as Isolation from "../../src/schema/Isolation.ts"
import * as Live from "../../src/schema/Live.ts"
import { InvalidFile } from "../../src/schema/FileErrors.ts"
import { errorJson } from "../../src/programs/print.ts"

const failed = Cause.fail("boom")

// Built from plain objects so that the test compiles whatever the subject field is called.
const build = <A>(Class: new(props: never) => A, props: Record<string, unknown>): A => new Class(props as never)

// A family's error (docs/cli.md, "Error tags and the library's error families") is tagged by its
// family and named by its reason, the tag it had before: it prints as that name.
const cases: ReadonlyArray<{
  readonly tag: string
  readonly family?: string
  readonly subject: string
  readonly once?: false
  readonly make: () => Error
}> = [
  {
    tag: "InvalidPluginName",
    family: "RegistryError",
    subject: "Bad_Name",
    make: () => build(Errors.RegistryError, { reason: "InvalidPluginName", plugin: "Bad_Name", rule: "lower case only" })
  },
  {
    tag: "PluginAlreadyRegistered",
    family: "RegistryError",
    subject: "notes",
    make: () => build(Errors.RegistryError, { reason: "PluginAlreadyRegistered", plugin: "notes" })
  },
  {
    tag: "PluginInitializeFailed",
    family: "RegistryError",
    subject: "flaky",
    make: () => build(Errors.RegistryError, { reason: "PluginInitializeFailed", plugin: "flaky", outcome: "failed", cause: failed })
  },
  {
    tag: "PluginDependencyMissing",
    family: "RegistryError",
    subject: "notes",
    make: () => build(Errors.RegistryError, { reason: "PluginDependencyMissing", plugin: "notes", missing: ["store"] })
  },
  {
    tag: "PluginHasDependents",
    family: "RegistryError",
    subject: "store",
    make: () => build(Errors.RegistryError, { reason: "PluginHasDependents", plugin: "store", dependents: ["notes"] })
  },
  {
    tag: "PluginDisposeFailed",
    family: "RegistryError",
    subject: "bad-promise",
    make: () => build(Errors.RegistryError, { reason: "PluginDisposeFailed", plugin: "bad-promise", outcome: "failed", cause: failed })
  },
  {
    tag: "PluginNotFound",
    family: "ActionRejected",
    subject: "ghost",
    make: () => build(Errors.ActionRejected, { reason: "PluginNotFound", plugin: "ghost" })
  },
  {
    tag: "PluginNotReady",
    family: "ActionRejected",
    subject: "notes",
    make: () => build(Errors.ActionRejected, { reason: "PluginNotReady", plugin: "notes", status: "initializing" })
  },
  {
    tag: "NotLicensed",
    family: "PluginLoadError",
    subject: "premium",
    once: false,
    make: () => build(LoaderErrors.PluginLoadError, { reason: "NotLicensed", plugin: "premium" })
  },
  {
    tag: "RegistrationFailed",
    family: "PluginLoadError",
    subject: "broken",
    once: false,
    make: () => build(LoaderErrors.PluginLoadError, { reason: "RegistrationFailed", plugin: "broken", cause: failed })
  },
  {
    tag: "UnknownCapability",
    family: "CapabilityError",
    subject: "search",
    make: () =>
      build(CapabilityErrors.CapabilityError, { reason: "UnknownCapability", capability: "search", file: "/root/capabilities/decl.json" })
  }
]

const firstLine = (text: string): string => text.split("\n")[0] ?? ""
const count = (text: string, word: string): number => text.split(word).length - 1

describe("errors print as their tag", () => {
  for (const { family, make, once, subject, tag } of cases) {
    it(`${tag}: name is the tag, the subject is printed once`, () => {
      const error = make()
      expect(error.name).toBe(tag)
      expect(error).toHaveProperty("_tag", family ?? tag)
      if (family !== undefined) expect(error).toHaveProperty("reason", tag)
      expect(Object.prototype.hasOwnProperty.call(error, "name")).toBe(false)

      const printed = firstLine(String(error))
      expect(printed.startsWith(`${tag}: `)).toBe(true)
      expect(printed).toBe(`${tag}: ${error.message}`)

      const pretty = firstLine(Cause.pretty(Cause.fail(error)))
      expect(pretty.startsWith(`${tag}: `)).toBe(true)
      // NotLicensed's and RegistrationFailed's messages are the `<reason>` of a line that names
      // the plugin already (docs/plugin-loader.md), so they do not name it.
      expect(count(pretty, subject)).toBe(once === false ? 0 : 1)
    })
  }

  it("a failed dispose prints the plugin's name once, after its tag", () => {
    const error = build(Errors.RegistryError, { reason: "PluginDisposeFailed", plugin: "bad-promise", outcome: "failed", cause: failed })
    expect(firstLine(String(error))).toBe("PluginDisposeFailed: Plugin bad-promise failed to dispose (failed): Error: boom")
    expect(count(error.message, "bad-promise")).toBe(1)
  })

  it("an unhandled PluginInitializeFailed prints its tag, not the plugin's name", () => {
    const error = build(Errors.RegistryError, { reason: "PluginInitializeFailed", plugin: "flaky", outcome: "failed", cause: failed })
    const pretty = Cause.pretty(Cause.fail(error))
    expect(pretty.startsWith("PluginInitializeFailed: Plugin flaky failed to initialize (failed)")).toBe(true)
    expect(pretty).not.toMatch(/^flaky: /m)
  })

  it.scoped("a close whose plugin failed to dispose prints the failure by its tag, not the plugin's name", () =>
    Effect.gen(function*() {
      const city = yield* City.make()
      yield* city.plugins.add(Plugin.fromPromise({
        name: "bad-promise",
        version: "1.0.0",
        dispose: () => Promise.reject(new Error("disk gone"))
      }))
      const error = yield* Effect.flip(city.close)
      const line = error.message.split("\n")[1] ?? ""
      expect(line.startsWith("  - plugin bad-promise: PluginDisposeFailed: Plugin bad-promise failed to dispose (failed): ")).toBe(true)
      expect(line).not.toContain("bad-promise: bad-promise")
    }))
})

describe("a family's error is tagged in --json by its reason, the tag it had before", () => {
  it("CapabilityError: its reason is the envelope's _tag, and is not repeated", () => {
    const error = new CapabilityErrors.CapabilityError({ reason: "UnknownPeer", personality: "zoe", file: "/root/peers/zoe.json" })
    expect(error.message).toBe("unknown peer zoe: no peer file at /root/peers/zoe.json")
    expect(errorJson(error)).toEqual({ peer: "zoe", file: "/root/peers/zoe.json", _tag: "UnknownPeer", message: error.message })
  })

  it("StateRootError: its reason is the envelope's _tag; waitedMs is waited_ms", () => {
    const error = new CapabilityErrors.StateRootError({ reason: "RootLockBusy", root: "/root", waitedMs: 5 })
    expect(error.message).toBe("state root /root is locked by another city process (waited 5 ms)")
    expect(errorJson(error)).toEqual({ root: "/root", waited_ms: 5, _tag: "RootLockBusy", message: error.message })
  })
})

describe("a family's field renamed from reason keeps its old name in --json", () => {
  it("PluginRootUnreadable: detail is the envelope's reason, as before", () => {
    const error = new LoaderErrors.PluginLoadError({ reason: "PluginRootUnreadable", root: "/plugins", detail: "permission denied" })
    expect(error.message).toBe("plugin root /plugins cannot be read: permission denied")
    expect(errorJson(error)).toEqual({ root: "/plugins", reason: "permission denied", _tag: "PluginRootUnreadable", message: error.message })
  })
})

describe("a call's ending reads as before, in the library and from city plugins call", () => {
  it("ActionInputRejected: the library's issues, or the field and the rule", () => {
    const library = new Errors.ActionRejected({ reason: "ActionInputRejected", plugin: "p", action: "a", issues: "Expected number" })
    expect(library.message).toBe("Input rejected by p/a: Expected number")
    const called = new Errors.ActionRejected({ reason: "ActionInputRejected", plugin: "p", action: "a", field: "n", rule: "Expected number" })
    expect(called.message).toBe(`Input rejected by p/a: field "n": Expected number`)
    expect(errorJson(called)).toEqual({ plugin: "p", action: "a", field: "n", rule: "Expected number", _tag: "ActionInputRejected", message: called.message })
  })

  it("ResultNotJson: detail is the envelope's reason, as before", () => {
    const error = new Errors.ActionRejected({ reason: "ResultNotJson", plugin: "p", action: "a", detail: "cycle" })
    expect(error.message).toBe("Action p/a returned a result that is not JSON: cycle")
    expect(errorJson(error)).toEqual({ plugin: "p", action: "a", reason: "cycle", _tag: "ResultNotJson", message: error.message })
  })
})

describe("WorkspaceError reads as its two old classes did", () => {
  it("WorkspaceAlreadyExists and WorkspaceReleaseFailed: their messages, their names", () => {
    const taken = new Errors.WorkspaceError({ reason: "WorkspaceAlreadyExists", id: "ws" })
    expect(String(taken)).toBe("WorkspaceAlreadyExists: Workspace already exists in City: ws")
    const stuck = new Errors.WorkspaceError({ reason: "WorkspaceReleaseFailed", id: "ws", cause: failed })
    expect(String(stuck)).toBe("WorkspaceReleaseFailed: Workspace ws failed to release: Error: boom")
  })

  it.scoped("city.workspaces.add of a taken id fails with the family, reason WorkspaceAlreadyExists", () =>
    Effect.gen(function*() {
      const city = yield* City.make()
      yield* city.workspaces.add({ id: "ws", path: "/tmp/ws" })
      const taken = yield* Effect.flip(city.workspaces.add({ id: "ws", path: "/tmp/ws" }))
      expect(taken).toMatchObject({ _tag: "WorkspaceError", reason: "WorkspaceAlreadyExists", id: "ws" })
    }))
})

describe("SessionError reads as its four old classes did", () => {
  it("AgentAlreadyExists, AgentNotFound, SessionClosed and TurnEnded: their messages, their names", () => {
    const cases = [
      [{ reason: "AgentAlreadyExists", id: "ada" }, "AgentAlreadyExists: Agent already exists in City: ada"],
      [{ reason: "AgentNotFound", id: "ada" }, "AgentNotFound: Unknown agent: ada"],
      [{ reason: "SessionClosed", session: "ada/1", closedBy: "closed" }, "SessionClosed: Session ada/1 is closed: it was closed"],
      [{ reason: "SessionClosed", session: "ada/1", closedBy: "agent-removed" }, "SessionClosed: Session ada/1 is closed: its Agent was removed"],
      [{ reason: "SessionClosed", session: "ada/1", closedBy: "city-closed" }, "SessionClosed: Session ada/1 is closed: the City is closing"],
      [{ reason: "TurnEnded", session: "ada/1", turn: 2 }, "TurnEnded: Turn 2 of session ada/1 has ended: a Step needs a running Turn"]
    ] as const
    for (const [props, printed] of cases) {
      const error = new Errors.SessionError(props)
      expect(String(error)).toBe(printed)
      expect(firstLine(Cause.pretty(Cause.fail(error)))).toBe(printed)
      expect(error).toMatchObject({ _tag: "SessionError", name: props.reason })
    }
  })

  it.scoped("city.agents.add of a taken id fails with the family, reason AgentAlreadyExists", () =>
    Effect.gen(function*() {
      const city = yield* City.make()
      yield* city.agents.add({ id: "ada" })
      const taken = yield* Effect.flip(city.agents.add({ id: "ada" }))
      expect(taken).toMatchObject({ _tag: "SessionError", reason: "AgentAlreadyExists", id: "ada" })
      expect(taken.message).toBe("Agent already exists in City: ada")
    }))
})

describe("EndpointError reads as its five old classes did", () => {
  it("EndpointHostFailed, ToolNotAvailable, ToolFailed, EndpointNotHosted, OwedWorkFailed: their messages, their names", () => {
    const cases = [
      [{ reason: "EndpointHostFailed", identity: "claude-ada", operation: "reload", detail: "exit 3" }, "EndpointHostFailed: endpoint claude-ada: reload failed: exit 3"],
      [
        { reason: "ToolNotAvailable", identity: "claude-ada", tool: "stamp", available: [] },
        "ToolNotAvailable: endpoint claude-ada: tool stamp is not listed by its launch-read files (available: none)"
      ],
      [
        { reason: "ToolNotAvailable", identity: "claude-ada", tool: "stamp", available: ["a", "b"] },
        "ToolNotAvailable: endpoint claude-ada: tool stamp is not listed by its launch-read files (available: a, b)"
      ],
      [{ reason: "ToolFailed", identity: "claude-ada", tool: "stamp", detail: "exit 1" }, "ToolFailed: endpoint claude-ada: tool stamp failed: exit 1"],
      [{ reason: "EndpointNotHosted", identity: "claude-ada" }, "EndpointNotHosted: endpoint claude-ada is not hosted in this process (launch it first)"],
      [
        { reason: "OwedWorkFailed", identity: "claude-ada", work: "reload", detail: "exit 3", attempts: 2, next_attempt_at: "2026-01-01T00:00:00Z" },
        "OwedWorkFailed: owed reload of claude-ada failed (attempt 2, next at 2026-01-01T00:00:00Z): exit 3"
      ],
      [
        { reason: "OwedWorkFailed", identity: "claude-ada", work: "removal", detail: "exit 3", unrecorded: "disk full" },
        "OwedWorkFailed: owed removal of claude-ada failed (not recorded: disk full): exit 3"
      ]
    ] as const
    for (const [props, printed] of cases) {
      const error = new Live.EndpointError(props)
      expect(String(error)).toBe(printed)
      expect(firstLine(Cause.pretty(Cause.fail(error)))).toBe(printed)
      expect(error).toMatchObject({ _tag: "EndpointError", name: props.reason })
    }
  })
})

describe("IsolationError reads as its three old classes did", () => {
  const cases = [
    [
      { reason: "IsolatedFailure", plugin: "notes", what: "action add", errorTag: "NotesError", detail: "disk gone", fields: { path: "/x" } },
      "IsolatedFailure: Plugin notes (worker): action add failed: NotesError: disk gone"
    ],
    [{ reason: "IsolatedFailure", plugin: "notes", what: "initialize", detail: "already initialized" }, "IsolatedFailure: Plugin notes (worker): initialize failed: already initialized"],
    [{ reason: "WorkerEnded", plugin: "notes", detail: "it exited with code 7" }, "WorkerEnded: Plugin notes: its worker ended: it exited with code 7"],
    [{ reason: "WorkerEnded", plugin: "notes", detail: "it was killed by SIGKILL", isolation: "process" }, "WorkerEnded: Plugin notes: its process ended: it was killed by SIGKILL"],
    [{ reason: "IsolatedFailure", plugin: "notes", what: "system", detail: "no text", isolation: "process" }, "IsolatedFailure: Plugin notes (process): system failed: no text"],
    [
      { reason: "IsolatedActionError", plugin: "notes", action: "add", error: { _tag: "Full" } },
      "IsolatedActionError: Plugin notes (worker): action add failed with its declared error"
    ]
  ] as const

  it("IsolatedFailure, WorkerEnded, IsolatedActionError: their messages, their names", () => {
    for (const [props, printed] of cases) {
      const error = new Isolation.IsolationError(props)
      expect(String(error)).toBe(printed)
      expect(firstLine(Cause.pretty(Cause.fail(error)))).toBe(printed)
      expect(error).toMatchObject({ _tag: "IsolationError", name: props.reason })
    }
  })

  it("each reason crosses the worker protocol as itself (CallAction's failure Schema)", () => {
    const failure = Isolation.CallAction.failure
    for (const [props, printed] of cases) {
      const crossed = Schema.decodeUnknownSync(failure)(structuredClone(Schema.encodeSync(failure)(new Isolation.IsolationError(props))))
      expect(crossed).toBeInstanceOf(Isolation.IsolationError)
      expect(crossed).toMatchObject(props)
      expect(String(crossed)).toBe(printed)
    }
  })
})

describe("an InvalidFile prints as the error of its kind of file", () => {
  const file = "/root/x.json"
  const cases = [
    ["Declaration", "field", `invalid capability declaration ${file}: field "field": rule`],
    ["PeerFile", "", `invalid peer file ${file}: rule`],
    ["HostConfig", "field", `invalid host configuration ${file}: field "field": rule`],
    ["EndpointRecords", "", `invalid endpoint records ${file}: rule (rewritten by the next call)`],
    ["LoaderSettings", "field", `${file}: field: rule`]
  ] as const
  for (const [reason, field, message] of cases) {
    it(`${reason}: named Invalid${reason}, its own wording, and tagged so in --json`, () => {
      const error = new InvalidFile({ reason, file, ...Faults.one(field, "rule") })
      expect(error.message).toBe(message)
      expect(firstLine(String(error))).toBe(`Invalid${reason}: ${message}`)
      expect(firstLine(Cause.pretty(Cause.fail(error)))).toBe(`Invalid${reason}: ${message}`)
      const faults = [{ field, rule: "rule" }]
      expect(errorJson(error)).toEqual({ file, field, rule: "rule", faults, more_faults: 0, _tag: `Invalid${reason}`, message })
      expect(Object.keys(errorJson(error))).toEqual(["file", "field", "rule", "faults", "more_faults", "_tag", "message"])
    })
  }

  it("a hint follows the message after a semicolon, and is a field of --json", () => {
    const error = new InvalidFile({ reason: "PeerFile", file, ...Faults.one("", "rule"), hint: "try --force" })
    expect(error.message).toBe(`invalid peer file ${file}: rule; try --force`)
    expect(errorJson(error)).toEqual({
      file,
      field: "",
      rule: "rule",
      faults: [{ field: "", rule: "rule" }],
      more_faults: 0,
      hint: "try --force",
      _tag: "InvalidPeerFile",
      message: error.message
    })
  })

  it("a file with several faults is one line each, naming the file, the field and the rule; --json lists them", () => {
    const error = new InvalidFile({
      reason: "Declaration",
      file,
      ...Faults.collect([{ field: "provision.args", rule: "r1" }, { field: "unprovision.args", rule: "r2" }, { field: "capability", rule: "r3" }])
    })
    expect(error.lines).toEqual([
      `invalid capability declaration ${file}: field "provision.args": r1`,
      `invalid capability declaration ${file}: field "unprovision.args": r2`,
      `invalid capability declaration ${file}: field "capability": r3`
    ])
    expect(error.message).toBe(error.lines.join("\n"))
    expect([error.field, error.rule]).toEqual(["provision.args", "r1"])
    expect(errorJson(error)).toMatchObject({
      _tag: "InvalidDeclaration",
      field: "provision.args",
      rule: "r1",
      faults: [{ field: "provision.args", rule: "r1" }, { field: "unprovision.args", rule: "r2" }, { field: "capability", rule: "r3" }],
      more_faults: 0
    })
  })

  it("25 faults are 20 lines and a count of the other 5; the hint ends the last line", () => {
    const all = Array.from({ length: 25 }, (_, i) => ({ field: `runtimes[${i}]`, rule: "must be a name" }))
    const error = new InvalidFile({ reason: "PeerFile", file, ...Faults.collect([all[0]!, ...all.slice(1)]), hint: "try --force" })
    expect(error.faults).toHaveLength(20)
    expect(error.moreFaults).toBe(5)
    expect(error.lines).toHaveLength(21)
    expect(error.lines[19]).toBe(`invalid peer file ${file}: field "runtimes[19]": must be a name`)
    expect(error.lines[20]).toBe("… and 5 more faults; try --force")
    expect(errorJson(error)).toMatchObject({ more_faults: 5 })
  })
})
