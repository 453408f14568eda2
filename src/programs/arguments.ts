/**
 * The checks of a verb's arguments before it reads anything (docs/cli.md, "Exit codes"): a
 * personality, capability or runtime given on the command line is a name (src/schema/Name.ts;
 * `InvalidName` names the rule), checked before any file is read, so `city reload ../../x`
 * never opens a path outside the root; a runtime must be one this host knows (`UnknownRuntime`
 * names the known ones); and a verb that reads the state root fails on a root that does not
 * exist (`RootNotFound`). All three are refused input: exit 2. The joints check their own
 * arguments the same way (`checkName`, `JointRunner.checkRuntime`); the verbs that do not run a
 * joint (`reload`, `remove-runtime`, `status`, the `plugins` verbs) check them here.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { CapabilityError } from "../schema/CapabilityErrors.ts"
import { checkName } from "../services/capabilities/JointRunner.ts"
import { RuntimeProfiles } from "../services/capabilities/RuntimeProfiles.ts"
import { StateRoot } from "../services/root/StateRoot.ts"

/** Fails with `InvalidName` unless `value` is a valid personality. */
export const personality = (value: string) => checkName("personality", value)

/** Fails with `InvalidName` unless every value is a valid runtime name. */
export const runtimeNames = (values: ReadonlyArray<string>) =>
  Effect.forEach(values, (value) => checkName("runtime", value), { discard: true })

/** Fails with `UnknownRuntime` (naming the known ones) unless this host knows every runtime. */
export const knownRuntimes = (values: ReadonlyArray<string>) =>
  Effect.flatMap(RuntimeProfiles, (host) =>
    Effect.forEach(
      values,
      (runtime) => host.isKnown(runtime) ? Effect.void : Effect.fail(new CapabilityError({ reason: "UnknownRuntime", runtime, known: host.known })),
      { discard: true }
    ))

/** Fails with `RootNotFound` unless the state root exists. */
export const existingRoot = Effect.flatMap(StateRoot, (state) => state.require)
