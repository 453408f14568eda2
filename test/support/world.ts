/**
 * Support for the live-application tests: a temp world (state root, peer cwd, scripts), a
 * capability whose provisioner writes a real MCP tool entry into each runtime's launch-read file
 * (claude `<cwd>/.mcp.json`, codex `<cwd>/.codex/config.toml`, opencode `<privateDir>/<tool>.json`)
 * and removes it on unprovision, the tool's own script, and the service layers over either the
 * Scripted or the City-sessions host.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import * as City from "../../src/City.ts"
import * as CapabilityServices from "../../src/layers/CapabilityServices.ts"
import * as LiveApplication from "../../src/layers/LiveApplication.ts"
import { EndpointHost, type EndpointHostShape } from "../../src/services/live/EndpointHost.ts"
import { declaration, seedPeer, tempDir, writeJson } from "../acceptance/cityCli.ts"

export interface World {
  readonly base: string
  readonly root: string
  readonly work: string
  readonly bin: string
}

export const world = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const base = yield* tempDir
  const w: World = { base, root: join(base, "root"), work: join(base, "work"), bin: join(base, "bin") }
  yield* fs.makeDirectory(w.work)
  yield* fs.makeDirectory(w.bin)
  yield* fs.makeDirectory(w.root)
  return w
})

const script = (file: string, lines: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(file, ["#!/bin/sh", ...lines, ""].join("\n"))
    yield* fs.chmod(file, 0o755)
    return file
  })

/** A tool whose call prints `<tool>:<input>`. */
export const toolScript = (w: World, tool: string) =>
  script(join(w.bin, `tool-${tool}`), [`printf '%s:%s' '${tool}' "$CITY_TOOL_INPUT"`])

/**
 * A provisioner adding (provision-peer) or removing (unprovision-peer) the MCP entry of `tool` in
 * the runtime's launch-read file. argv: verb personality runtime cwd occasion.
 */
export const mcpProvisioner = (w: World, tool: string, toolCommand: string) =>
  script(join(w.bin, `prov-${tool}`), [
    "verb=$1; runtime=$3; cwd=$4",
    "case \"$runtime\" in",
    "  claude)",
    "    if [ \"$verb\" = provision-peer ]; then",
    `      printf '{"mcpServers":{"${tool}":{"command":"${toolCommand}","args":[]}}}\\n' > "$cwd/.mcp.json"`,
    "    else printf '{\"mcpServers\":{}}\\n' > \"$cwd/.mcp.json\"; fi ;;",
    "  codex)",
    "    mkdir -p \"$cwd/.codex\"",
    "    if [ \"$verb\" = provision-peer ]; then",
    `      printf '[mcp_servers.${tool}]\\ncommand = "${toolCommand}"\\nargs = []\\n' > "$cwd/.codex/config.toml"`,
    "    else : > \"$cwd/.codex/config.toml\"; fi ;;",
    "  opencode)",
    "    if [ \"$verb\" = provision-peer ]; then",
    `      printf '{"mcp":{"${tool}":{"type":"local","command":["${toolCommand}"]}}}\\n' > "$CITY_PRIVATE_DIR/${tool}.json"`,
    `    else rm -f "$CITY_PRIVATE_DIR/${tool}.json"; fi ;;`,
    "esac"
  ])

/** A peer `alice` in `w.work` with the given runtimes, and the declaration file of `tool`. */
export const capability = (w: World, tool: string, runtimes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    yield* seedPeer(w.root, "alice", w.work, runtimes)
    const command = yield* toolScript(w, tool)
    const prov = yield* mcpProvisioner(w, tool, command)
    return yield* writeJson(w.bin, `${tool}.json`, declaration({ name: tool, command: prov, runtimes: [...runtimes] }))
  })

const capabilities = (w: World) => CapabilityServices.layer({ root: w.root, lockWait: Duration.seconds(30) })

/** The live services over a given EndpointHost (e.g. a Scripted one). */
export const scriptedLayer = (w: World, host: EndpointHostShape) =>
  LiveApplication.services.pipe(
    Layer.provideMerge(Layer.succeed(EndpointHost, host)),
    Layer.provideMerge(capabilities(w))
  )

/** The live services over the City-sessions host, with a City and the capability services on the root. */
export const cityLayer = (w: World) =>
  LiveApplication.services.pipe(
    Layer.provideMerge(LiveApplication.citySessionsHost),
    Layer.provideMerge(Layer.merge(City.layer({ root: w.root }), CapabilityServices.layer({ root: w.root }))),
    Layer.provideMerge(NodeContext.layer)
  )

