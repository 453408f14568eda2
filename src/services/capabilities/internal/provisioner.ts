/**
 * The provisioner's implementation (Provisioner.ts): the capability joints (`register`, `sync`,
 * `unregister`) here, the peer joints from `PeerJoints`, on the shared `JointRunner`.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { InvalidFile } from "../../../schema/FileErrors.ts"
import { checkSettings, type JointSettings } from "../EndpointCalls.ts"
import { checkName, makeJointRunner, type RemovalSettings } from "../JointRunner.ts"
import { type JointReport, notUnprovisioned } from "../JointReport.ts"
import { peerJoints } from "../PeerJoints.ts"

/**
 * Makes the provisioner on the capability services.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const runner = yield* makeJointRunner
  const { capabilities, locked, records, state, sweep } = runner

  const register = (file: string, settings?: JointSettings) =>
    Effect.gen(function*() {
      const declaration = yield* capabilities.readFile(file)
      yield* checkSettings(settings)
      yield* state.ensure
      return yield* locked(settings, Effect.gen(function*() {
        yield* capabilities.store(declaration)
        const report = yield* sweep(declaration, "sweep-on", settings)
        return { declaration, report }
      }))
    })

  const sync = (name: string, settings?: JointSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(settings, Effect.flatMap(capabilities.get(name), (declaration) => sweep(declaration, "sweep-on", settings)))
    )

  /** `unregister --force` of an invalid declaration: nothing can run; say what stays provisioned. */
  const forceUnregister = (name: string, invalid: InvalidFile) =>
    Effect.gen(function*() {
      const recorded = yield* records.get(name)
      const outcomes = notUnprovisioned(recorded.endpoints, "off-all", `the declaration is invalid (${invalid.rule})`)
      yield* capabilities.remove(name)
      yield* records.remove(name)
      return {
        outcomes,
        invalid: [invalid],
        verdict: outcomes.length > 0 ? "failed" : "warned"
      } satisfies JointReport
    })

  const unregister = (name: string, settings?: RemovalSettings) =>
    Effect.zipRight(
      checkName("capability", name),
      locked(settings, Effect.gen(function*() {
        const declaration = yield* Effect.either(capabilities.get(name))
        if (declaration._tag === "Left") {
          const e = declaration.left
          if (e._tag !== "InvalidFile" || e.reason !== "Declaration") return yield* e
          if (settings?.force === true) return yield* forceUnregister(name, e)
          return yield* new InvalidFile({
            reason: "Declaration",
            file: e.file,
            field: e.field,
            rule: e.rule,
            faults: e.faults,
            moreFaults: e.moreFaults,
            hint: `\`city capability unregister ${name} --force\` deletes it; its endpoints cannot be unprovisioned`
          })
        }
        const report = yield* sweep(declaration.right, "off-all", settings)
        yield* capabilities.remove(name)
        yield* records.remove(name)
        return report
      }))
    )

  return { register, sync, unregister, ...peerJoints(runner) }
})

