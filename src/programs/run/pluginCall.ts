/**
 * What `city plugins call <plugin> <action> [--input <json>]` does (its parameters are in
 * `../plugins.ts`; docs/cli.md, "Calling a plugin's action"): calls one action of a loaded plugin
 * by name and prints what it answered.
 *
 * - The arguments first, before the state root is read: a plugin name that breaks the name rule,
 *   and `--input` text that is not JSON, are refused in one line (exit 2). Without `--input` the
 *   action is given `undefined`.
 * - Where it runs: when a `city daemon` runs on the root, in the daemon's City, through its control
 *   channel (services/control/), so the plugins answer as the daemon's instances, never initialized
 *   a second time; `--bundled`, `--freeze-limit` and `plugins.json` are not read then. A daemon that
 *   runs but whose channel cannot be reached (it published none within 30 s, or it refused or
 *   dropped the connection) is exit 1 with one line saying so, and no City is loaded beside it.
 *   When no daemon runs, the call runs in a throwaway City loaded as `plugins list` loads it
 *   (run/plugins.ts, `throwawayCity`), closed (every plugin disposed) before the verb ends.
 * - The call itself is services/city/internal/actionCall.ts: the caller is the Agent `cli` in the Workspace
 *   `cli` at the invocation's directory; the result is a JSON value.
 * - Printed: the result on stdout, a string as it is (its lines and tabs kept, other control characters escaped), anything else as
 *   indented JSON (`undefined` is `null`); with `--json` the document `{ ok: true, verb, plugin,
 *   action, source, daemon, result }` (`source`: `daemon` or `throwaway`). A call that ends
 *   without a result is one `city: error:` line, and its envelope with `--json`.
 * - Exit codes, by the exit policy (schema/ExitPolicy.ts): 0 for a result; 1 when the action
 *   failed (its typed failure, with its tag; a defect; the plugin's worker ending), when the plugin
 *   is not ready, when the result is not JSON, when the City closed, when the daemon's channel
 *   cannot be reached; 2 for bad usage, input that is not JSON, an unknown plugin or action, and
 *   input the action's Schema refuses (one line naming the field and the rule). As the other
 *   `plugins` verbs: a missing state root or a refused `plugins.json` is 2, an unreadable root 1.
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallRequest } from "../../schema/ActionCall.ts"
import type { ControlResponse } from "../../schema/ControlChannel.ts"
import * as PluginNameRule from "../../schema/PluginName.ts"
import * as ActionCall from "../../services/city/internal/actionCall.ts"
import * as ControlClient from "../../services/control/ControlClient.ts"
import { version } from "../version.ts"
import * as Arguments from "../arguments.ts"
import { Invocation } from "../invocation.ts"
import * as Opt from "../options.ts"
import * as Out from "../output.ts"
import { type LoaderInput, runLoaderVerb, stateLayer, throwawayCity } from "./plugins.ts"

/** What `plugins call` is given (its flags and arguments, parsed). */
export type CallInput = LoaderInput & {
  readonly freezeLimit: number
  readonly plugin: string
  readonly action: string
  readonly input: Option.Option<string>
}

/** `--input`'s JSON, or the refusal in one line; `undefined` without the flag. */
const parseInput = (text: Option.Option<string>): Effect.Effect<unknown, Opt.UsageError> =>
  Option.match(text, {
    onNone: () => Effect.succeed(undefined),
    onSome: (json) =>
      Effect.try({
        try: (): unknown => JSON.parse(json),
        catch: (error) =>
          new Opt.UsageError({ message: `--input is not valid JSON (${Out.oneLine(error instanceof Error ? error.message : String(error), 200)})` })
      })
  })

/** A text result as printed: its lines and tabs kept, every other control character escaped (docs/cli.md, "Printing"). */
const printable = (text: string): string => text.split(/(\n|\t)/).map((part) => part === "\n" || part === "\t" ? part : Out.escapeControl(part)).join("")

/** The call in a throwaway City of this process, answered as the daemon answers. */
const inThrowaway = (o: CallInput, request: CallRequest) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* throwawayCity("plugins call", o)
    return yield* ActionCall.call(request).pipe(
      Effect.match({
        onFailure: (error): ControlResponse => ({ _tag: "Failed", error }),
        onSuccess: (result): ControlResponse => ({ _tag: "Returned", result })
      }),
      Effect.provide(context)
    )
  }))

/** `plugins call <plugin> <action> [--input <json>]` */
export const call = (o: CallInput) =>
  runLoaderVerb(
    "plugins call",
    o.json,
    Effect.gen(function*() {
      const invalid = PluginNameRule.check(o.plugin)
      if (invalid !== undefined) return yield* new Opt.UsageError({ message: invalid.message })
      const input = yield* parseInput(o.input)
      const invocation = yield* Invocation
      const root = Opt.resolveRoot(o.root, invocation)
      const request: CallRequest = { plugin: o.plugin, action: o.action, cwd: invocation.cwd, ...(input === undefined ? {} : { input }) }
      const daemon = yield* Effect.zipRight(Arguments.existingRoot, ControlClient.locate()).pipe(Effect.provide(stateLayer(root)))
      const answer = Option.isSome(daemon)
        ? yield* ControlClient.send({ root, ...daemon.value }, { _tag: "CallAction", ...request }, yield* version)
        : yield* inThrowaway(o, request)
      if (answer._tag === "Failed") return yield* Effect.fail(answer.error)
      if (o.json) {
        return yield* Out.printDocument("plugins call", {
          ok: true,
          plugin: o.plugin,
          action: o.action,
          source: Option.isSome(daemon) ? "daemon" : "throwaway",
          daemon: { running: Option.isSome(daemon), pid: Option.getOrNull(Option.map(daemon, (d) => d.pid)) },
          result: answer.result
        })
      }
      yield* typeof answer.result === "string" ? Console.log(printable(answer.result)) : Out.printJson(answer.result)
    })
  )
