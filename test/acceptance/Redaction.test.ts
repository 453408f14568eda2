/**
 * Secrets where operators look (docs/cli.md, "Redaction"): a provisioner and an endpoint's
 * `reload` command print a password, a bearer token and a key of the host's own pattern on stderr.
 * None of them reaches the endpoint records, the owed reload's `last_error`, `register`'s table
 * or `--json`, `city status` (plain and `--json`), the lifecycle log, the daemon's log or
 * `/api/status`; each place holds `[redacted]` instead. Real commands, a real daemon with `--http`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { city, declaration, seedPeer, sh, writeJson } from "./cityCli.ts"
import { world } from "../support/world.ts"
import { awaitLog, textOf } from "../support/pluginDaemon.ts"
import { startStatusDaemon } from "../support/statusWorld.ts"

const secrets = ["hunter2", "abc.def", "sk-live42"]
const printed = "password=hunter2 Authorization: Bearer abc.def key sk-live42"

const expectClean = (where: string, text: string) => {
  for (const secret of secrets) expect(text, `${where} holds ${secret}`).not.toContain(secret)
}

describe("redaction", () => {
  it.scopedLive("a secret a command prints is in no record, log, printed table, status or served document", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const w = yield* world
      yield* seedPeer(w.root, "alice", w.work, ["claude", "opencode"])
      // claude: provisioned (a launch-read file written), so a reload is owed, and the reload fails
      // with the secrets; opencode: the provisioner itself fails with them.
      const prov = yield* sh(join(w.bin, "prov"), [
        "runtime=$3; cwd=$4",
        `if [ "$runtime" = claude ]; then printf '{"mcpServers":{"stamp":{"command":"/bin/true","args":[]}}}\\n' > "$cwd/.mcp.json"; exit 0; fi`,
        `echo '${printed}' >&2`,
        "exit 3"
      ])
      const status = yield* sh(join(w.bin, "status"), ["echo idle"])
      const reload = yield* sh(join(w.bin, "reload"), [`echo 'reload refused: ${printed}' >&2`, "exit 1"])
      const cmd = (command: string, verb: string) => ({ command, args: [verb, "{personality}", "{runtime}"] })
      yield* writeJson(w.root, "host.json", {
        schema: 1,
        agent_runtimes: ["claude", "codex", "opencode"],
        channel_runtimes: [],
        profiles: {
          claude: { commands: { status: cmd(status, "status"), reload: cmd(reload, "reload"), retire: cmd(status, "retire"), kill: cmd(status, "kill") } },
          opencode: { private_dir: "state/opencode/{personality}" }
        },
        redact: ["sk-[a-z0-9]+"]
      })
      const decl = yield* writeJson(w.bin, "stamp.json", declaration({ name: "stamp", command: prov, runtimes: ["claude", "opencode"] }))

      const registered = yield* city(["capability", "register", decl], { root: w.root })
      expect(registered.code, registered.stderr).toBe(1)
      expect(registered.stdout + registered.stderr).toContain("password=[redacted]")
      expectClean("register", registered.stdout + registered.stderr)
      const again = yield* city(["capability", "sync", "stamp", "--json"], { root: w.root })
      expect(again.stdout).toContain("[redacted]")
      expectClean("sync --json", again.stdout + again.stderr)

      const records = yield* fs.readFileString(join(w.root, "state", "endpoints", "stamp.json"))
      expect(records).toContain("password=[redacted] Authorization: Bearer [redacted] key [redacted]")
      expectClean("the endpoint records", records)
      const owed = yield* fs.readFileString(join(w.root, "state", "reloads", "claude-alice.json"))
      expect(owed).toContain("password=[redacted]")
      expectClean("the owed reload", owed)
      const log = yield* fs.readFileString(join(w.root, "logs", "lifecycle.log"))
      expect(log).toContain("[redacted]")
      expectClean("lifecycle.log", log)
      for (const args of [["status"], ["status", "--json"]]) {
        const shown = yield* city(args, { root: w.root })
        expect(shown.stdout + shown.stderr, args.join(" ")).toContain("[redacted]")
        expectClean(args.join(" "), shown.stdout + shown.stderr)
      }

      // The daemon retries the owed reload; it fails again, into its log and its board.
      const { daemon, url } = yield* startStatusDaemon(w, "daemon")
      yield* awaitLog(daemon, "password=[redacted]")
      const client = yield* HttpClient.HttpClient
      const served = yield* Effect.flatMap(client.execute(HttpClientRequest.get(new URL("/api/status", url).toString())), (r) => r.text)
      expect(served).toContain("[redacted]")
      expectClean("/api/status", served)
      expectClean("the daemon's log", yield* textOf(daemon.log))
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, NodeHttpClient.layer))), 240_000)
})
