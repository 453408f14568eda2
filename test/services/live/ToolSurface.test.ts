/**
 * The tools an endpoint hosted as a City Session can call: read from its launch-read files.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { readTools } from "../../../src/services/live/ToolSurface.ts"
import { tempDir } from "../../acceptance/cityCli.ts"

describe("ToolSurface", () => {
  it.scopedLive("reads mcpServers, opencode's mcp fragments and codex's [mcp_servers.*]; later files win; bad files give nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const files = {
        mcp: join(dir, "a.mcp.json"),
        frag: join(dir, "b.frag.json"),
        toml: join(dir, "c.config.toml"),
        bad: join(dir, "d.bad.json"),
        settings: join(dir, "e.settings.json")
      }
      yield* fs.writeFileString(files.mcp, JSON.stringify({ mcpServers: { one: { command: "/bin/one", args: ["-x"] }, same: { command: "/bin/old" } } }))
      yield* fs.writeFileString(files.frag, JSON.stringify({ mcp: { two: { type: "local", command: ["/bin/two", "a", "b"] } } }))
      yield* fs.writeFileString(files.toml, [
        "model = \"x\"",
        "[mcp_servers.three]",
        "command = \"/bin/three\"",
        "args = [\"--flag\", \"v\"]",
        "[mcp_servers.\"same\"]",
        "command = \"/bin/new\"",
        "[other]",
        "command = \"/bin/not-a-tool\""
      ].join("\n"))
      yield* fs.writeFileString(files.bad, "{ not json")
      yield* fs.writeFileString(files.settings, JSON.stringify({ hooks: {} }))
      const pipe = join(dir, "f.fifo.json") // a FIFO among the launch files: refused, never opened
      execFileSync("mkfifo", [pipe])
      const tools = yield* readTools([...Object.values(files), pipe, join(dir, "absent.json")])
      expect([...tools.values()].map((t) => [t.name, t.command, t.args])).toEqual([
        ["one", "/bin/one", ["-x"]],
        ["same", "/bin/new", []],
        ["two", "/bin/two", ["a", "b"]],
        ["three", "/bin/three", ["--flag", "v"]]
      ])
    }).pipe(Effect.provide(NodeContext.layer)))
})
