/**
 * Calling one tool of an endpoint hosted as a City Session: its argv runs without a shell, the
 * call's input in `CITY_TOOL_INPUT`, stdout is the result; a non-zero exit, a signal or the
 * timeout (default 120 s, like provisioning) is `ToolFailed`. The tool leads its own process
 * group: interrupting the call, its timeout, and its end each send the group SIGKILL (nothing it
 * started outlives the call), and so does this process's exit while it runs (ChildGroups.ts).
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { ToolFailed } from "../../schema/Live.ts"
import * as ChildGroups from "../capabilities/ChildGroups.ts"
import type { Tool } from "./ToolSurface.ts"

/** The most a tool may print (stdout and stderr together): 16 MiB. */
const maxOutputBytes = 16 * 1024 * 1024

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
    let group = 0
    const end = () => {
      if (group === 0) return
      ChildGroups.signalGroup(group, "SIGKILL")
      ChildGroups.forget(group)
      group = 0
    }
    let settled = false
    const settle = (result: Effect.Effect<string, ToolFailed>) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const failed = (detail: string) => settle(Effect.fail(new ToolFailed({ identity, tool: tool.name, detail })))
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    let size = 0
    const child = spawn(tool.command, [...tool.args], {
      cwd,
      env: { ...process.env, CITY_TOOL_INPUT: input },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    if (child.pid !== undefined) {
      group = child.pid
      ChildGroups.track(group)
    }
    const collect = (into: Array<Buffer>) => (chunk: Buffer) => {
      size += chunk.length
      if (size > maxOutputBytes) {
        end()
        return failed(`output over ${maxOutputBytes} bytes`)
      }
      into.push(chunk)
    }
    child.stdout?.on("data", collect(out))
    child.stderr?.on("data", collect(err))
    const ms = Duration.toMillis(Duration.decode(timeout))
    const timer = ms <= 2_147_483_647 ? setTimeout(() => {
      end()
      failed(`no exit within ${ms} ms; killed`)
    }, ms) : undefined
    child.once("error", (error) => {
      clearTimeout(timer)
      end()
      failed(error.message)
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      end()
      if (code === 0) return settle(Effect.succeed(Buffer.concat(out).toString("utf8")))
      const stderr = Buffer.concat(err).toString("utf8").trim()
      failed(stderr !== "" ? stderr : code === null ? `killed by ${signal ?? "a signal"}` : `exit ${code}`)
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      end()
    })
  })
