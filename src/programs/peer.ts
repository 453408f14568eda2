/**
 * `city peer create|init|add-runtime|default-runtime|remove|remove-runtime|list`.
 * Birth (create, init, add-runtime, default-runtime onto an unwired runtime) and
 * removal run the provisioning commands; a failed call is a loud warning on
 * stderr and the verb still completes with exit 0 (spec: "A plugin hiccup never
 * kills a birth or blocks a removal").
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { basename } from "node:path"
import type { Peer } from "../schema/Peer.js"
import { type JointReport, type NewPeer, Provisioner } from "../services/Provisioner.js"
import * as Opt from "./options.js"
import * as Out from "./output.js"

const peerRow = (p: Peer) => [p.personality, p.default_runtime, p.runtimes.join(","), p.cwd]

/** A joint that completes whatever its calls did: warnings, then the result; exit 0. */
const renderJoint = (verb: string, json: boolean, report: JointReport, extra: Record<string, unknown>, headline: string) =>
  Out.renderReport({ policy: "joint", verb, json, report, extra, headline })

const runtimeOption = Options.text("runtime").pipe(
  Options.withDescription("A runtime of the peer (repeat for several; the first is the default)"),
  Options.atLeast(1)
)

const create = (o: { readonly json: boolean; readonly timeoutMs: number; readonly concurrency: number }, input: NewPeer) =>
  Effect.gen(function*() {
    const provisioner = yield* Provisioner
    const { peer, report } = yield* provisioner.createPeer(input, Out.settings(o.json, o.timeoutMs, o.concurrency))
    yield* renderJoint(
      "create",
      o.json,
      report,
      { peer },
      `created peer ${peer.personality} (${peer.runtimes.join(", ")}; default ${peer.default_runtime}) in ${peer.cwd}`
    )
  })

export const createCommand = Command.make("create", {
  ...Opt.commandOptions,
  personality: Args.text({ name: "personality" }),
  cwd: Options.text("cwd").pipe(Options.withDescription("The peer's working directory")),
  runtime: runtimeOption
}, (o) =>
  Out.runVerb(
    o.json,
    create(o, { personality: o.personality, cwd: o.cwd, runtimes: o.runtime }).pipe(Effect.provide(Opt.live(o.root)))
  )).pipe(Command.withDescription("Create a peer and provision its endpoints (birth)"))

export const init = Command.make("init", {
  ...Opt.commandOptions,
  personality: Args.text({ name: "personality" }).pipe(
    Args.withDescription("Default: the name of the current directory"),
    Args.optional
  ),
  runtime: runtimeOption
}, (o) =>
  Out.runVerb(
    o.json,
    create(o, {
      personality: Option.getOrElse(o.personality, () => basename(process.cwd())),
      cwd: process.cwd(),
      runtimes: o.runtime
    }).pipe(Effect.provide(Opt.live(o.root)))
  )).pipe(Command.withDescription("Create a peer whose cwd is the current directory (birth)"))

const personalityArg = Args.text({ name: "personality" })
const runtimeArg = Args.text({ name: "runtime" })

export const addRuntime = Command.make(
  "add-runtime",
  { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
  (o) =>
    Out.runVerb(
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* Provisioner
        const { peer, report } = yield* provisioner.addRuntime(
          o.personality,
          o.runtime,
          Out.settings(o.json, o.timeoutMs, o.concurrency)
        )
        yield* renderJoint("add-runtime", o.json, report, { peer }, `peer ${peer.personality}: runtime ${o.runtime} wired`)
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
).pipe(Command.withDescription("Declare a runtime for a peer (or repair it) and provision its endpoints (birth)"))

export const defaultRuntime = Command.make(
  "default-runtime",
  { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
  (o) =>
    Out.runVerb(
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* Provisioner
        const { peer, report, wired } = yield* provisioner.defaultRuntime(
          o.personality,
          o.runtime,
          Out.settings(o.json, o.timeoutMs, o.concurrency)
        )
        yield* renderJoint(
          "default-runtime",
          o.json,
          report,
          { peer, wired },
          `peer ${peer.personality}: default runtime ${o.runtime}${wired ? " (newly wired)" : ""}`
        )
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
).pipe(Command.withDescription("Make a runtime the default; an unwired runtime is wired first (birth)"))

export const remove = Command.make("remove", { ...Opt.commandOptions, personality: personalityArg }, (o) =>
  Out.runVerb(
    o.json,
    Effect.gen(function*() {
      const provisioner = yield* Provisioner
      const report = yield* provisioner.removePeer(o.personality, Out.settings(o.json, o.timeoutMs, o.concurrency))
      yield* renderJoint("remove", o.json, report, { personality: o.personality }, `removed peer ${o.personality}`)
    }).pipe(Effect.provide(Opt.live(o.root)))
  )).pipe(Command.withDescription("Unprovision the peer's endpoints (remove), then purge its state"))

export const removeRuntime = Command.make(
  "remove-runtime",
  { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
  (o) =>
    Out.runVerb(
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* Provisioner
        const { peer, report } = yield* provisioner.removeRuntime(
          o.personality,
          o.runtime,
          Out.settings(o.json, o.timeoutMs, o.concurrency)
        )
        yield* renderJoint(
          "remove-runtime",
          o.json,
          report,
          { peer },
          `peer ${peer.personality}: runtime ${o.runtime} removed`
        )
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
).pipe(Command.withDescription("Unprovision a runtime's endpoints (remove) and drop it from the peer"))

export const list = Command.make("list", { root: Opt.root, json: Opt.json }, (o) =>
  Out.runVerb(
    o.json,
    Effect.gen(function*() {
      const provisioner = yield* Provisioner
      const { peers, invalid } = yield* provisioner.peers
      yield* Out.warnInvalid({ invalid })
      if (o.json) return yield* Out.printJson({ peers, invalid: Out.invalidJson({ invalid }) })
      yield* Console.log(
        peers.length === 0 && invalid.length === 0
          ? "no peers"
          : Out.table(["PERSONALITY", "DEFAULT", "RUNTIMES", "CWD"], [
            ...peers.map(peerRow),
            ...invalid.map((e) => ["INVALID", "", "", `${e.file}: ${e.field === "" ? "" : `${e.field}: `}${e.rule}`])
          ])
      )
    }).pipe(Effect.provide(Opt.live(o.root)))
  )).pipe(Command.withDescription("Every peer with its runtimes and cwd"))

export const peer = Command.make("peer").pipe(
  Command.withDescription("Peers and their runtimes (endpoint birth and removal)"),
  Command.withSubcommands([createCommand, init, addRuntime, defaultRuntime, remove, removeRuntime, list])
)
