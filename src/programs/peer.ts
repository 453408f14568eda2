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
import type { CapabilityError } from "../schema/CapabilityErrors.ts"
import type { Peer } from "../schema/Peer.ts"
import { Overview } from "../services/capabilities/Overview.ts"
import { type JointReport, type JointSettings, type NewPeer, Provisioner } from "../services/capabilities/Provisioner.ts"
import * as Opt from "./options.ts"
import * as Out from "./output.ts"

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

/**
 * A verb on one runtime of one peer: it runs a joint of the Provisioner and renders its report,
 * with the joint's extra facts in the JSON document and the headline.
 */
const runtimeVerb = <A extends { readonly peer: Peer; readonly report: JointReport }, E extends CapabilityError>(
  name: string,
  description: string,
  run: (
    provisioner: Provisioner["Type"],
    personality: string,
    runtime: string,
    settings: JointSettings
  ) => Effect.Effect<A, E>,
  render: (result: A, runtime: string) => { readonly extra: Record<string, unknown>; readonly headline: string }
) =>
  Command.make(
    name,
    { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
    (o) =>
      Out.runVerb(
        o.json,
        Effect.gen(function*() {
          const provisioner = yield* Provisioner
          const result = yield* run(provisioner, o.personality, o.runtime, Out.settings(o.json, o.timeoutMs, o.concurrency))
          const { extra, headline } = render(result, o.runtime)
          yield* renderJoint(name, o.json, result.report, extra, headline)
        }).pipe(Effect.provide(Opt.live(o.root)))
      )
  ).pipe(Command.withDescription(description))

export const addRuntime = runtimeVerb(
  "add-runtime",
  "Declare a runtime for a peer (or repair it) and provision its endpoints (birth)",
  (provisioner, personality, runtime, settings) => provisioner.addRuntime(personality, runtime, settings),
  ({ peer }, runtime) => ({ extra: { peer }, headline: `peer ${peer.personality}: runtime ${runtime} wired` })
)

export const defaultRuntime = runtimeVerb(
  "default-runtime",
  "Make a runtime the default; an unwired runtime is wired first (birth)",
  (provisioner, personality, runtime, settings) => provisioner.defaultRuntime(personality, runtime, settings),
  ({ peer, wired }, runtime) => ({
    extra: { peer, wired },
    headline: `peer ${peer.personality}: default runtime ${runtime}${wired ? " (newly wired)" : ""}`
  })
)

const force = Options.boolean("force").pipe(
  Options.withDescription(
    "Remove the peer even when its peer file is invalid (its endpoints cannot be unprovisioned; they are listed)"
  )
)

export const remove = Command.make("remove", { ...Opt.commandOptions, personality: personalityArg, force }, (o) =>
  Out.runVerb(
    o.json,
    Effect.gen(function*() {
      const provisioner = yield* Provisioner
      const report = yield* provisioner.removePeer(o.personality, {
        ...Out.settings(o.json, o.timeoutMs, o.concurrency),
        force: o.force
      })
      yield* renderJoint("remove", o.json, report, { personality: o.personality }, `removed peer ${o.personality}`)
    }).pipe(Effect.provide(Opt.live(o.root)))
  )).pipe(Command.withDescription("Unprovision the peer's endpoints (remove), then purge its state"))

export const removeRuntime = runtimeVerb(
  "remove-runtime",
  "Unprovision a runtime's endpoints (remove) and drop it from the peer",
  (provisioner, personality, runtime, settings) => provisioner.removeRuntime(personality, runtime, settings),
  ({ peer }, runtime) => ({ extra: { peer }, headline: `peer ${peer.personality}: runtime ${runtime} removed` })
)

export const list = Command.make("list", { root: Opt.root, json: Opt.json }, (o) =>
  Out.runVerb(
    o.json,
    Effect.gen(function*() {
      const { invalid, peers } = yield* (yield* Overview).peers
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
