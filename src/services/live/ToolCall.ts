/**
 * Calling one tool of an endpoint hosted as a City Session: its argv runs without a shell, the
 * call's input in `CITY_TOOL_INPUT`, stdout is the result; a non-zero exit, a signal or the
 * timeout (default 120 s, like provisioning) is `ToolFailed`. The tool runs through the one child
 * runner (capabilities/ChildRunner.ts) and leads its own process group: interrupting the call, its
 * timeout, and its end each send the group SIGKILL (nothing it started outlives the call), and so
 * does this process's exit while it runs (ChildGroups.ts). Its output (stdout and stderr together)
 * is read until the pipes close, at most 16 MiB: beyond, the group is killed and the call fails.
 * A failure's detail is redacted with the default patterns (schema/Redaction.ts); a result is the
 * caller's data and is returned as printed.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { EndpointError } from "../../schema/Live.ts"
import { redact } from "../../schema/Redaction.ts"
import * as ChildRunner from "../capabilities/ChildRunner.ts"
import type { Tool } from "./ToolSurface.ts"

/** The most a tool may print (stdout and stderr together): 16 MiB. */
const maxOutputBytes = 16 * 1024 * 1024

/** The runner of tool calls: SIGKILL without grace, pipes read until they close. */
const tools = ChildRunner.make({
  killGraceMs: 0,
  stderrGraceMs: Infinity,
  tailBytes: maxOutputBytes,
  outputBytes: maxOutputBytes
})

/** This process's environment as it is now, with the call's input. */
const environment = (input: string): Record<string, string> => {
  const env = ChildRunner.currentEnvironment()
  env.CITY_TOOL_INPUT = input
  return env
}

/**
 * Calls one tool of an endpoint hosted as a City Session: its argv without a shell, the input in `CITY_TOOL_INPUT`, stdout as the result.
 * @since 0.1.0
 * @category constructors
 */
export const callTool = (
  identity: string,
  tool: Tool,
  input: string,
  cwd: string,
  timeout: Duration.DurationInput = Duration.seconds(120)
): Effect.Effect<string, EndpointError> => {
  const timeoutMs = Duration.toMillis(Duration.decode(timeout))
  return Effect.suspend(() =>
    ChildRunner.run(tools, { command: tool.command, args: tool.args, cwd, env: environment(input), timeoutMs })
  ).pipe(Effect.flatMap(({ outcome, stdout }) => {
    if (outcome.state === "ok") return Effect.succeed(stdout)
    const detail = outcome.state === "timeout" ? `no exit within ${timeoutMs} ms; killed` : outcome.detail ?? outcome.state
    return Effect.fail(new EndpointError({ reason: "ToolFailed", identity, tool: tool.name, detail: redact(detail) }))
  }))
}
