/**
 * `city peer create|init|add-runtime|default-runtime|remove|remove-runtime|list`.
 * Birth (create, init, add-runtime, default-runtime onto an unwired runtime) and
 * removal run the provisioning commands; a failed call is a loud warning on
 * stderr and the verb still completes with exit 0 (spec: "A plugin hiccup never
 * kills a birth or blocks a removal").
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { basename } from "node:path"
import type { CapabilityError } from "../schema/CapabilityErrors.ts"
import type { Peer } from "../schema/Peer.ts"
import { Listings } from "../services/capabilities/Listings.ts"
import { type JointReport, type JointSettings, type NewPeer, Provisioner } from "../services/capabilities/Provisioner.ts"
import { LiveJoints } from "../services/live/LiveJoints.ts"
import * as Arguments from "./arguments.ts"
import * as Json from "./jsonOutput.ts"
import * as Live from "./live.ts"
import * as Opt from "./options.ts"
import { Invocation } from "./invocation.ts"
import * as Out from "./output.ts"
import { group, verb } from "./verbs.ts"

const peerRow = (p: Peer) => [p.personality, p.default_runtime, p.runtimes.join(","), p.cwd]

/** A joint that completes whatever its calls did: warnings, then the result; exit 0. */
const renderJoint = <V extends Out.JointVerb>(verb: V, json: boolean, report: JointReport, extra: Out.Extra<V>, headline: string) =>
  Out.renderReport({ policy: "joint", verb, json, report, extra, headline })

const runtimeOption = Opt.described(
  Options.text("runtime").pipe(
    Options.withPseudoName("name"),
    Options.withDescription("A runtime of the peer (repeat for several; the first is the default)"),
    Options.atLeast(1)
  ),
  {
    kind: "flag",
    usage: "--runtime <name>",
    description: "A runtime of the peer; repeat for several, the first is the default",
    required: true
  }
)

const create = (
  verbPath: "peer create" | "peer init",
  o: { readonly json: boolean; readonly timeoutMs: number; readonly concurrency: number },
  input: NewPeer
) =>
  Effect.gen(function*() {
    const provisioner = yield* Provisioner
    const { peer, report } = yield* provisioner.createPeer(input, yield* Out.settings(o.json, o.timeoutMs, o.concurrency))
    yield* renderJoint(
      verbPath,
      o.json,
      report,
      Json.peerJson(peer),
      Out.safe`created peer ${peer.personality} (${peer.runtimes.join(", ")}; default ${peer.default_runtime}) in ${peer.cwd}`
    )
  })

const personalityArg = Opt.text("personality", "The peer's name")

export const createCommand = verb(
  "create",
  "Create a peer and provision its endpoints (birth)",
  {
    ...Opt.commandOptions,
    personality: personalityArg,
    cwd: Opt.described(
      Options.text("cwd").pipe(Options.withPseudoName("dir"), Options.withDescription("The peer's working directory")),
      { kind: "flag", usage: "--cwd <dir>", description: "The peer's working directory (absolute)", required: true }
    ),
    runtime: runtimeOption
  },
  (o) =>
    Out.runVerb(
      "peer create",
      o.json,
      create("peer create", o, { personality: o.personality, cwd: o.cwd, runtimes: o.runtime }).pipe(
        Effect.provide(Opt.live(o.root))
      )
    ),
  ["city peer create alice --cwd ~/src/alice --runtime claude --runtime opencode"]
)

export const init = verb(
  "init",
  "Create a peer whose working directory is the current one (birth)",
  {
    ...Opt.commandOptions,
    personality: Opt.described(Args.text({ name: "personality" }).pipe(Args.optional), {
      kind: "argument",
      usage: "[<personality>]",
      description: "The peer's name",
      default: "the name of the current directory"
    }),
    runtime: runtimeOption
  },
  (o) =>
    Out.runVerb(
      "peer init",
      o.json,
      Effect.gen(function*() {
        const { cwd } = yield* Invocation
        yield* create("peer init", o, {
          personality: Option.getOrElse(o.personality, () => basename(cwd)),
          cwd,
          runtimes: o.runtime
        })
      }).pipe(Effect.provide(Opt.live(o.root)))
    ),
  ["cd ~/src/alice && city peer init --runtime claude"]
)

const runtimeArg = Opt.text("runtime", "A runtime name (claude, codex, opencode, or one of host.json)")

/**
 * A verb on one runtime of one peer: it runs a joint of the Provisioner and renders its report,
 * with the joint's extra facts in the JSON document and the headline.
 */
const runtimeVerb = <
  const Name extends "add-runtime" | "default-runtime",
  A extends { readonly peer: Peer; readonly report: JointReport },
  E extends CapabilityError
>(
  name: Name,
  description: string,
  run: (
    provisioner: Provisioner["Type"],
    personality: string,
    runtime: string,
    settings: JointSettings
  ) => Effect.Effect<A, E>,
  render: (result: A, runtime: string) => { readonly extra: Out.Extra<`peer ${Name}`>; readonly headline: string }
) =>
  verb(
    name,
    description,
    { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
    (o) =>
      Out.runVerb(
        `peer ${name}`,
        o.json,
        Effect.gen(function*() {
          const provisioner = yield* Provisioner
          const settings = yield* Out.settings(o.json, o.timeoutMs, o.concurrency)
          const result = yield* run(provisioner, o.personality, o.runtime, settings)
          const { extra, headline } = render(result, o.runtime)
          yield* renderJoint<`peer ${Name}`>(`peer ${name}`, o.json, result.report, extra, headline)
        }).pipe(Effect.provide(Opt.live(o.root)))
      )
  )

export const addRuntime = runtimeVerb(
  "add-runtime",
  "Declare a runtime for a peer (or repair it) and provision its endpoints (birth)",
  (provisioner, personality, runtime, settings) => provisioner.addRuntime(personality, runtime, settings),
  ({ peer }, runtime) => ({
    extra: { ...Json.peerJson(peer), runtime },
    headline: Out.safe`peer ${peer.personality}: runtime ${runtime} wired`
  })
)

export const defaultRuntime = runtimeVerb(
  "default-runtime",
  "Make a runtime the default; an unwired runtime is wired first (birth)",
  (provisioner, personality, runtime, settings) => provisioner.defaultRuntime(personality, runtime, settings),
  ({ peer, wired }, runtime) => ({
    extra: { ...Json.peerJson(peer), runtime, wired },
    headline: Out.safe`peer ${peer.personality}: default runtime ${runtime}` + (wired ? " (newly wired)" : "")
  })
)

const force = Opt.force("Remove the peer even when its peer file is invalid; its endpoints cannot be unprovisioned and are listed")

export const remove = verb(
  "remove",
  "Unprovision the peer's endpoints (remove), then purge its state",
  { ...Opt.commandOptions, personality: personalityArg, force },
  (o) =>
    Out.runVerb(
      "peer remove",
      o.json,
      Effect.gen(function*() {
        const provisioner = yield* Provisioner
        const report = yield* provisioner.removePeer(o.personality, {
          ...(yield* Out.settings(o.json, o.timeoutMs, o.concurrency)),
          force: o.force
        })
        yield* renderJoint("peer remove", o.json, report, { peer: o.personality }, Out.safe`removed peer ${o.personality}`)
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
)

/**
 * `remove-runtime` on a live endpoint (spec: "remove-runtime on a live endpoint"): `removed` in the
 * call (idle: retired first), `pending` (busy: removed by the daemon after its Turn; exit 0),
 * `foreign` or `failed` (not removed; exit 1). `--force` kills the session now and removes.
 */
export const removeRuntime = verb(
  "remove-runtime",
  "Unprovision a runtime's endpoints (remove) and drop it; a busy endpoint is removed after its Turn",
  {
    ...Opt.commandOptions,
    personality: personalityArg,
    runtime: runtimeArg,
    force: Opt.described(
      Options.boolean("force").pipe(Options.withDescription("Kill a live session now instead of waiting for its Turn")),
      { kind: "flag", usage: "--force", description: "Kill a live session now instead of waiting for its Turn, and remove it" }
    )
  },
  (o) =>
    Out.runVerb(
      "peer remove-runtime",
      o.json,
      Effect.gen(function*() {
        yield* Arguments.existingRoot
        yield* Arguments.knownRuntimes([o.runtime])
        const joints = yield* LiveJoints
        const result = yield* joints.removeRuntime(o.personality, o.runtime, {
          force: o.force,
          settings: yield* Out.settings(o.json, o.timeoutMs, o.concurrency)
        })
        const daemon = yield* Live.daemonInfo
        const headline = Out.safe`peer ${result.peer.personality}: runtime ${o.runtime} ${result.removal}` +
          (result.detail === undefined ? "" : Out.safe` (${result.detail})`)
        yield* renderJoint("peer remove-runtime", o.json, result.report, {
          ...Json.peerJson(result.peer),
          runtime: o.runtime,
          removal: result.removal,
          removal_detail: result.detail ?? null,
          daemon
        }, headline)
        if (result.removal === "pending") yield* Live.notePending(1, o.json)
        if (result.removal === "foreign" || result.removal === "failed") yield* Out.setExitCode(1)
      }).pipe(
        Effect.provide(Opt.live(o.root)),
        // The names first: nothing is read for an argument that is not one.
        (checked) => Effect.zipRight(Effect.zipRight(Arguments.personality(o.personality), Arguments.runtimeNames([o.runtime])), checked)
      )
    )
)

export const list = verb(
  "list",
  "List every peer with its runtimes and working directory",
  Opt.readOptions,
  (o) =>
    Out.runVerb(
      "peer list",
      o.json,
      Effect.gen(function*() {
        const { invalid, peers } = yield* (yield* Listings).peers
        yield* Out.warnInvalid({ invalid })
        if (o.json) {
          return yield* Out.printDocument("peer list", { ok: true, peers: peers.map(Json.peerJson), invalid: Json.invalidJson(invalid) })
        }
        yield* Console.log(
          peers.length === 0 && invalid.length === 0
            ? "no peers"
            : Out.table(["PERSONALITY", "DEFAULT", "RUNTIMES", "CWD"], [
              ...peers.map(peerRow),
              ...invalid.map((e) => ["INVALID", "", "", `${e.file}: ${e.field === "" ? "" : `${e.field}: `}${e.rule}`])
            ])
        )
      }).pipe(Effect.provide(Opt.live(o.root)))
    )
)

export const peer = group("peer", "Peers and their runtimes (endpoint birth and removal)", [
  createCommand,
  init,
  addRuntime,
  defaultRuntime,
  remove,
  removeRuntime,
  list
])
