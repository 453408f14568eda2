/**
 * The peer joints of `Provisioner` (docs/capability-plugin-lifecycle.md,
 * "Joints (core-owned)"): peer birth (`createPeer`, `addRuntime`, and
 * `defaultRuntime` onto an unwired runtime) provisions each new endpoint
 * (`birth`); `removePeer` and `removeRuntime` unprovision (`remove`) before the
 * state is purged. A failed call is a warning and the flow continues. The
 * decisions where the spec is silent are listed in `Provisioner`'s header.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import {
  CapabilityError
} from "../../schema/CapabilityErrors.ts"
import { InvalidFile } from "../../schema/FileErrors.ts"
import type { Peer } from "../../schema/Peer.ts"
import { checkSettings, type JointSettings } from "./EndpointCalls.ts"
import { checkName, type JointRunner, type NewPeer, type RemovalSettings } from "./JointRunner.ts"
import { type JointReport, notUnprovisioned, withInvalid } from "./JointReport.ts"

/**
 * The five peer joints on the joint runner: `createPeer`, `addRuntime`, `defaultRuntime`,
 * `removePeer`, `removeRuntime`, as `Provisioner` exposes them.
 * @since 0.1.0
 * @category constructors
 */
export const peerJoints = (runner: JointRunner) => {
  const { checkRuntime, fs, locked, path, peerJoint, peers, records, state } = runner

  const createPeer = (input: NewPeer, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", input.personality)
      const runtimes = [...new Set(input.runtimes)]
      const first = runtimes[0]
      if (first === undefined) {
        return yield* new CapabilityError({ reason: "InvalidName", kind: "runtime list", value: "", rule: "a peer needs at least one --runtime" })
      }
      yield* Effect.forEach(runtimes, checkRuntime, { discard: true })
      const cwd = path.resolve(input.cwd)
      const info = yield* fs.stat(cwd).pipe(
        Effect.mapError(() => new CapabilityError({ reason: "InvalidCwd", path: cwd, rule: "does not exist" }))
      )
      if (info.type !== "Directory") return yield* new CapabilityError({ reason: "InvalidCwd", path: cwd, rule: "is not a directory" })
      const peer: Peer = { schema: 1, personality: input.personality, cwd, runtimes, default_runtime: first }
      yield* checkSettings(settings)
      yield* state.ensure
      return yield* locked(settings, Effect.gen(function*() {
        if (yield* peers.exists(peer.personality)) {
          return yield* new CapabilityError({ reason: "PeerAlreadyExists", personality: peer.personality, file: peers.file(peer.personality) })
        }
        yield* peers.put(peer)
        const report = yield* peerJoint(peer, peer.runtimes, "birth", settings)
        return { peer, report }
      }))
    })

  const addRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkRuntime(runtime)
      return yield* locked(settings, Effect.gen(function*() {
        const current = yield* peers.get(personality)
        const peer: Peer = current.runtimes.includes(runtime)
          ? current
          : { ...current, runtimes: [...current.runtimes, runtime] }
        if (peer !== current) yield* peers.put(peer)
        const report = yield* peerJoint(peer, [runtime], "birth", settings)
        return { peer, report }
      }))
    })

  const defaultRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkRuntime(runtime)
      return yield* locked(settings, Effect.gen(function*() {
        const current = yield* peers.get(personality)
        const wired = !current.runtimes.includes(runtime)
        const peer: Peer = {
          ...current,
          runtimes: wired ? [...current.runtimes, runtime] : current.runtimes,
          default_runtime: runtime
        }
        yield* peers.put(peer)
        const report: JointReport = wired
          ? yield* peerJoint(peer, [runtime], "birth", settings)
          : { outcomes: [], invalid: [], verdict: "ok" }
        return { peer, wired, report }
      }))
    })

  /** `removePeer --force` of an invalid peer file: nothing can run; say what stays provisioned. */
  const forceRemovePeer = (personality: string, invalid: InvalidFile) =>
    Effect.gen(function*() {
      const recorded = yield* records.ofPeer(personality)
      const outcomes = notUnprovisioned(recorded, "remove", `the peer file is invalid (${invalid.rule})`)
      // The records first, the peer file last (see removePeer).
      const invalidRecords = yield* records.forget(recorded)
      yield* peers.purge(personality)
      return { outcomes, invalid: [invalid, ...invalidRecords], verdict: "warned" } satisfies JointReport
    })

  const removePeer = (personality: string, settings?: RemovalSettings) =>
    Effect.zipRight(
      checkName("personality", personality),
      locked(settings, Effect.gen(function*() {
        const peer = yield* Effect.either(peers.get(personality))
        if (peer._tag === "Left") {
          const e = peer.left
          if (e._tag !== "InvalidFile" || e.reason !== "PeerFile") return yield* e
          if (settings?.force === true) return yield* forceRemovePeer(personality, e)
          return yield* new InvalidFile({
            reason: "PeerFile",
            file: e.file,
            field: e.field,
            rule: e.rule,
            faults: e.faults,
            moreFaults: e.moreFaults,
            hint: `\`city peer remove ${personality} --force\` removes it; its endpoints cannot be unprovisioned`
          })
        }
        const report = yield* peerJoint(peer.right, peer.right.runtimes, "remove", settings)
        // The peer file goes last: while it is there, `peer remove` again finishes a removal a
        // crash cut (the records forgotten, the private folders gone); removed first, a crash
        // left records of a peer no verb could name (found by the crash-point tests, test/crash).
        const invalid = yield* records.forget(report.outcomes)
        yield* peers.purge(personality)
        return withInvalid(report, invalid)
      }))
    )

  const removeRuntime = (personality: string, runtime: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      yield* checkName("personality", personality)
      yield* checkName("runtime", runtime)
      return yield* locked(settings, Effect.gen(function*() {
        const current = yield* peers.get(personality)
        if (!current.runtimes.includes(runtime)) return yield* new CapabilityError({ reason: "RuntimeNotWired", personality, runtime })
        if (current.default_runtime === runtime) return yield* new CapabilityError({ reason: "DefaultRuntimeRemoval", personality, runtime })
        const report = yield* peerJoint(current, [runtime], "remove", settings)
        const peer: Peer = { ...current, runtimes: current.runtimes.filter((r) => r !== runtime) }
        // The peer file without the runtime goes last, as in removePeer: until then the runtime
        // is the peer's and `remove-runtime` again finishes what a crash cut.
        const invalid = yield* records.forget(report.outcomes)
        yield* peers.purgeRuntime(personality, runtime)
        yield* peers.put(peer)
        return { peer, report: withInvalid(report, invalid) }
      }))
    })

  return { createPeer, addRuntime, defaultRuntime, removePeer, removeRuntime }
}
