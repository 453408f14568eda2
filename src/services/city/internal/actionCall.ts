/**
 * A plugin action called by name from outside the City's process (docs/cli.md, "Calling a plugin's
 * action"): JSON in, JSON out, and every other ending as data (schema/ActionCall.ts). `city plugins
 * call` runs it in the daemon's City (its control channel, services/control/) or in a throwaway
 * City of its own; both answer through this one function.
 *
 * The call is `city.calls(base).invoke(plugin, action, input)` (CityService.makeCalls): it leases
 * the current view, decodes the input with the action's Schema, projects a fresh PluginContext and
 * runs the handler. What this adds is the reading of its endings. Decisions:
 * - The caller is the Agent `cli` in the Workspace `cli` whose path is the caller's working
 *   directory; no Session, no Turn.
 * - A refused input names the first issue's field and rule (ParseIssue.firstIssue), not the
 *   Schema's tree: on the host's thread the input is decoded again under a fresh lease to get the
 *   issue (only when it was refused); an isolated plugin's worker sends the field and the rule
 *   with its refusal (isolation/internal/workerCalls.ts).
 * - `ActionFailed`'s Cause is read once: a tagged failure is the action's typed failure, printed
 *   with its tag and its own fields (an isolated plugin's crosses as the worker's `errorTag`,
 *   `reason` and `fields`); a defect, an untagged failure or the plugin's worker ending is its one
 *   line.
 * - The result must have a JSON form (it is printed, and it crosses the channel as JSON): `undefined`
 *   is `null`; a BigInt or a cycle is `ResultNotJson`. What `JSON.stringify` drops (functions,
 *   `undefined` fields) is dropped.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CallError, CallRequest } from "../../../schema/ActionCall.ts"
import { printedTag } from "../../../schema/ErrorFamily.ts"
import { ActionRejected, describeCause } from "../../../schema/Errors.ts"
import type { CallBase } from "../../../schema/HostModel.ts"
import * as Isolation from "../../../schema/Isolation.ts"
import { oneLine } from "../../../schema/OneLine.ts"
import { firstIssue } from "../../../schema/ParseIssue.ts"
import { makeCalls } from "../CityService.ts"
import { ExecutionLeases } from "./executionLeases.ts"
import { instanceIn } from "../ExecutionView.ts"
import { PluginRegistry } from "./pluginRegistry.ts"

/**
 * Who calls from outside: the Agent `cli`, in the Workspace `cli` at the caller's directory.
 * @since 0.1.0
 * @category constructors
 */
export const callerAt = (cwd: string): CallBase => ({ agent: { id: "cli" }, workspace: { id: "cli", path: cwd } })

/** The longest field and rule a refusal keeps, as ParseIssue.documentIssue cuts them. */
const fieldMax = 120
const ruleMax = 300

/**
 * A JSON value of `value`, or why it has none. `undefined` is `null`.
 */
const jsonOf = (value: unknown): Either.Either<unknown, string> => {
  if (value === undefined) return Either.right(null)
  try {
    const text = JSON.stringify(value)
    return Either.right(text === undefined ? null : JSON.parse(text))
  } catch (error) {
    return Either.left(error instanceof Error ? error.message : String(error))
  }
}

/** A failure's own fields as JSON: each one that has a JSON form (an Error as its message). */
const ownFields = (value: object): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (key === "_tag" || key === "cause" || typeof field === "function") continue
    const json = jsonOf(field instanceof Error ? field.message : field)
    if (Either.isRight(json)) fields[key] = json.right
  }
  return fields
}

/** An action's ending that has a tag: its JSON (`_tag`, `message`, own fields) and its one line. */
const typed = (request: CallRequest, tag: string, message: string, fields: Record<string, unknown>) =>
  new ActionRejected({
    reason: "ActionFailed",
    plugin: request.plugin,
    action: request.action,
    failure: { ...fields, _tag: tag, message },
    detail: oneLine(message === "" ? tag : `${tag}: ${message}`, 1000)
  })

const untyped = (request: CallRequest, detail: string) =>
  new ActionRejected({ reason: "ActionFailed", plugin: request.plugin, action: request.action, detail: oneLine(detail, 1000) })

/**
 * What `ActionFailed`'s Cause says: the worker's input refusal, the action's typed failure, or
 * something that is neither (a defect, an untagged failure, the worker ending).
 */
const failureOf = (request: CallRequest, error: ActionRejected): ActionRejected => {
  if (error.cause === undefined) return error
  const failure = Cause.failureOption(error.cause)
  if (Option.isNone(failure)) return untyped(request, describeCause(error.cause))
  const value = failure.value
  if (value instanceof Isolation.IsolationError && value.reason === "IsolatedFailure") {
    const field = value.fields?.["field"]
    const rule = value.fields?.["rule"]
    // The worker's refusal of the input (workerCalls.ts): tagged ParseError, with the issue.
    if (value.errorTag === "ParseError" && value.what === `action ${request.action}` && typeof field === "string" && typeof rule === "string") {
      return new ActionRejected({ reason: "ActionInputRejected", plugin: request.plugin, action: request.action, field, rule })
    }
    return value.errorTag === undefined
      ? untyped(request, value.detail ?? "")
      : typed(request, value.errorTag, value.detail ?? "", value.fields === undefined ? {} : ownFields(value.fields))
  }
  if (value instanceof Isolation.IsolationError && value.reason === "WorkerEnded") return untyped(request, value.message)
  const tag = printedTag(value)
  if (tag === undefined) return untyped(request, describeCause(error.cause))
  const message = value instanceof Error ? value.message : ""
  return typed(request, tag, message, ownFields(value as object))
}

/**
 * The refused input's first issue, decoded again with the action's Schema under a fresh lease;
 * the library's tree on one line when the plugin changed meanwhile and the input now decodes.
 */
const refusalOf = (request: CallRequest, error: ActionRejected) =>
  Effect.scoped(Effect.gen(function*() {
    const view = yield* (yield* ExecutionLeases).acquire
    const schema = instanceIn(view, request.plugin)?.contributions.actions?.[request.action]?.input
    const decoded = schema === undefined ? undefined : Schema.decodeUnknownEither(schema)(request.input)
    const issue = decoded !== undefined && Either.isLeft(decoded) ? firstIssue(decoded.left) : { field: "", rule: error.issues ?? error.message }
    return new ActionRejected({
      reason: "ActionInputRejected",
      plugin: request.plugin,
      action: request.action,
      field: oneLine(issue.field, fieldMax),
      rule: oneLine(issue.rule, ruleMax)
    })
  }))

/**
 * Calls `request.action` of `request.plugin` in the City whose registry and leases are provided:
 * the result as a JSON value, or the call's ending as a `CallError`.
 * @since 0.1.0
 * @category constructors
 */
export const call = (request: CallRequest): Effect.Effect<unknown, CallError, PluginRegistry | ExecutionLeases> =>
  Effect.gen(function*() {
    const calls = makeCalls(yield* PluginRegistry, yield* ExecutionLeases)(callerAt(request.cwd))
    const result = yield* calls.invoke(request.plugin, request.action, request.input).pipe(
      Effect.catchTag("ActionRejected", (error) =>
        error.reason === "ActionInputRejected"
          ? Effect.flatMap(refusalOf(request, error), Effect.fail)
          : error.reason === "ActionFailed"
          ? Effect.fail(failureOf(request, error))
          : Effect.fail(error))
    )
    return yield* Either.match(jsonOf(result), {
      onLeft: (reason) => Effect.fail(new ActionRejected({ reason: "ResultNotJson", plugin: request.plugin, action: request.action, detail: reason })),
      onRight: Effect.succeed
    })
  })
