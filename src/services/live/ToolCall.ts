/**
 * Calling one tool of an endpoint hosted as a City Session: its argv runs without a shell, the
 * call's input in `CITY_TOOL_INPUT`, stdout is the result; a non-zero exit, a signal or the
 * timeout (default 120 s, like provisioning) is `ToolFailed`. Interrupting the call kills it.
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { ToolFailed } from "../../schema/Live.ts"
import type { Tool } from "./ToolSurface.ts"

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
): Effect.Effect<string, ToolFailed> =>
  Effect.async<string, ToolFailed>((resume) => {
    const child = execFile(tool.command, [...tool.args], {
      cwd,
      env: { ...process.env, CITY_TOOL_INPUT: input },
      timeout: Duration.toMillis(Duration.decode(timeout)),
      killSignal: "SIGKILL",
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024
    }, (error, stdout, stderr) => {
      if (error === null) return resume(Effect.succeed(stdout))
      const detail = stderr.trim() !== "" ? stderr.trim() : error.message
      resume(Effect.fail(new ToolFailed({ identity, tool: tool.name, detail })))
    })
    child.stdin?.end()
    return Effect.sync(() => void child.kill("SIGKILL"))
  })
