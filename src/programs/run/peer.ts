/**
 * What `city peer create|init|add-runtime|default-runtime|remove|remove-runtime|list` do (their
 * parameters are in `../peer.ts`). Birth (create, init, add-runtime, default-runtime onto an unwired runtime) and
 * removal run the provisioning commands; a failed call is a loud warning on
 * stderr and the verb still completes with exit 0 (spec: "A plugin hiccup never
 * kills a birth or blocks a removal").
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { basename } from "node:path"
import type { CapabilityFailure } from "../../schema/CapabilityErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import { type JointReport, type JointSettings, type NewPeer, Provisioner } from "../../services/capabilities/Provisioner.ts"
import { LiveJoints } from "../../services/live/LiveJoints.ts"
import * as Arguments from "../arguments.ts"
import * as JsonValues from "../jsonValues.ts"
import * as Live from "./owed.ts"
import * as Opt from "../options.ts"
import { Invocation } from "../invocation.ts"
import * as Out from "../output.ts"
import * as Services from "./services.ts"

/** A joint that completes whatever its calls did: warnings, then the result; exit 0. */
const renderJoint = <V extends Out.JointVerb>(verb: V, json: boolean, report: JointReport, extra: Out.Extra<V>, headline: string) =>
  Out.renderReport({ policy: "joint", verb, json, report, extra, headline })

const birth = (
  verbPath: "peer create" | "peer init",
  o: Opt.CommandInput,
  input: NewPeer
) =>
  Effect.gen(function*() {
    const provisioner = yield* Provisioner
    const { peer, report } = yield* provisioner.createPeer(input, yield* Out.settings(o.json, o.timeoutMs, o.concurrency))
    yield* renderJoint(
      verbPath,
      o.json,
      report,
      JsonValues.peerJson(peer),
      Out.safe`created peer ${peer.personality} (${peer.runtimes.join(", ")}; default ${peer.default_runtime}) in ${peer.cwd}`
    )
  })

/** The arguments of `peer add-runtime` and `peer default-runtime`. */
export type RuntimeInput = Opt.CommandInput & { readonly personality: string; readonly runtime: string }

/** `peer create <personality> --cwd <dir> --runtime <name>...` */
export const create = (
  o: Opt.CommandInput & { readonly personality: string; readonly cwd: string; readonly runtime: ReadonlyArray<string> }
) =>
  Out.runVerb(
    "peer create",
    o.json,
    birth("peer create", o, { personality: o.personality, cwd: o.cwd, runtimes: o.runtime }).pipe(
      Effect.provide(Services.live(o.root))
    )
  )

/** `peer init [<personality>] --runtime <name>...`: the peer's working directory is the current one. */
export const init = (
  o: Opt.CommandInput & { readonly personality: Option.Option<string>; readonly runtime: ReadonlyArray<string> }
) =>
  Out.runVerb(
    "peer init",
    o.json,
    Effect.gen(function*() {
      const { cwd } = yield* Invocation
      yield* birth("peer init", o, {
        personality: Option.getOrElse(o.personality, () => basename(cwd)),
        cwd,
        runtimes: o.runtime
      })
    }).pipe(Effect.provide(Services.live(o.root)))
  )

/**
 * A verb on one runtime of one peer: it runs a joint of the Provisioner and renders its report,
 * with the joint's extra facts in the JSON document and the headline.
 */
const runtimeVerb = <
  const Name extends "add-runtime" | "default-runtime",
  A extends { readonly peer: Peer; readonly report: JointReport },
  E extends CapabilityFailure
>(
  name: Name,
  run: (
    provisioner: Provisioner["Type"],
    personality: string,
    runtime: string,
    settings: JointSettings
  ) => Effect.Effect<A, E>,
  render: (result: A, runtime: string) => { readonly extra: Out.Extra<`peer ${Name}`>; readonly headline: string }
) =>
(o: RuntimeInput) =>
  Out.runVerb(
    `peer ${name}`,
    o.json,
    Effect.gen(function*() {
      const provisioner = yield* Provisioner
      const settings = yield* Out.settings(o.json, o.timeoutMs, o.concurrency)
      const result = yield* run(provisioner, o.personality, o.runtime, settings)
      const { extra, headline } = render(result, o.runtime)
      yield* renderJoint<`peer ${Name}`>(`peer ${name}`, o.json, result.report, extra, headline)
    }).pipe(Effect.provide(Services.live(o.root)))
  )

/** `peer add-runtime <personality> <runtime>` */
export const addRuntime = runtimeVerb(
  "add-runtime",
  (provisioner, personality, runtime, settings) => provisioner.addRuntime(personality, runtime, settings),
  ({ peer }, runtime) => ({
    extra: { ...JsonValues.peerJson(peer), runtime },
    headline: Out.safe`peer ${peer.personality}: runtime ${runtime} wired`
  })
)

/** `peer default-runtime <personality> <runtime>` */
export const defaultRuntime = runtimeVerb(
  "default-runtime",
  (provisioner, personality, runtime, settings) => provisioner.defaultRuntime(personality, runtime, settings),
  ({ peer, wired }, runtime) => ({
    extra: { ...JsonValues.peerJson(peer), runtime, wired },
    headline: Out.safe`peer ${peer.personality}: default runtime ${runtime}` + (wired ? " (newly wired)" : "")
  })
)

/** `peer remove <personality> [--force]` */
export const remove = (o: Opt.CommandInput & { readonly personality: string; readonly force: boolean }) =>
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
    }).pipe(Effect.provide(Services.live(o.root)))
  )

/**
 * `remove-runtime` on a live endpoint (spec: "remove-runtime on a live endpoint"): `removed` in the
 * call (idle: retired first), `pending` (busy: removed by the daemon after its Turn; exit 0),
 * `foreign` or `failed` (not removed; exit 1). `--force` kills the session now and removes.
 */
export const removeRuntime = (o: RuntimeInput & { readonly force: boolean }) =>
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
        ...JsonValues.peerJson(result.peer),
        runtime: o.runtime,
        removal: result.removal,
        removal_detail: result.detail ?? null,
        daemon
      }, headline)
      if (result.removal === "pending") yield* Live.notePending(1, o.json)
      if (result.removal === "foreign" || result.removal === "failed") yield* Out.setExitCode(1)
    }).pipe(
      Effect.provide(Services.live(o.root)),
      // The names first: nothing is read for an argument that is not one.
      (checked) => Effect.zipRight(Effect.zipRight(Arguments.personality(o.personality), Arguments.runtimeNames([o.runtime])), checked)
    )
  )
