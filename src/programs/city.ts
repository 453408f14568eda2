/**
 * The `city` binary (`bin/city.mjs` loads this file): the root command and its
 * subcommand groups. Each group lives in its own module under `src/programs/`;
 * a later group is added to the list below.
 *
 * Exit codes: 0 success, 1 some endpoint failed, 2 refused input (invalid
 * declaration, unknown capability or peer, bad usage: an argument the parser
 * refuses is bad usage too).
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { capability } from "./capability.ts"
import { runMain } from "./main.ts"
import * as Out from "./output.ts"
import { peer } from "./peer.ts"

export const city = Command.make("city").pipe(
  Command.withDescription("effect-city: capability plugins and peers on this host"),
  Command.withSubcommands([capability, peer])
)

export const cli = Command.run(city, { name: "city", version: "0.1.0" })

/**
 * Anything a verb did not turn into a typed failure (a defect, a platform error from the parser)
 * is still one line on stderr and exit 1: stdout stays clean (valid JSON under `--json`).
 */
const unexpected = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.gen(function*() {
    const failure = Cause.squash(cause)
    const message = failure instanceof Error ? failure.message : String(failure)
    yield* Console.error(`city: error: ${Out.oneLine(message, 2000)}`)
    process.exitCode = 1
  })

const main = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.catchIf(ValidationError.isValidationError, () =>
    Effect.sync(() => {
      process.exitCode = 2
    })),
  Effect.catchAllCause(unexpected),
  Out.withLogger,
  Effect.provide(NodeContext.layer)
)

runMain(main, {
  teardown: (exit, onExit) => {
    const code = Exit.isFailure(exit) ? 1 : typeof process.exitCode === "number" ? process.exitCode : 0
    onExit(code)
  }
})
