/**
 * The commands of the chaos fleet, as `/bin/sh` scripts that every host shares (their paths are
 * the same on every host, as a declaration's command must be):
 *
 * - `provisioner <provision|unprovision> <capability> <personality> <runtime> <cwd> <occasion>`,
 *   the declaration's command for both provision and unprovision;
 * - `reload <personality> <runtime> <cwd>`, the `claude` runtime's reload, which also says which
 *   version of the endpoint's launch-read file (`<cwd>/.mcp.json`, `{"chaos":<version>}`) it read
 *   as it started;
 * - `status`, which says `idle`.
 *
 * Each of the first two appends a `start` line, sleeps (by its pid: a provisioning call 0.2-0.8 s,
 * a reload 0.4-0.9 s, longer than a daemon takes to owe a reload for an edit it saw: the checker's
 * assumption, test/chaos/checker.ts), and appends an `end` line, to the shared history
 * (test/chaos/history.ts), each line with one `printf` to a file opened for appending. The
 * endpoint's host is the name of its state root's parent folder (commands run in the state root).
 * A command ended by SIGTERM (a restarted daemon ends the commands its dead predecessor left
 * running) writes its `end` line with `signal=TERM`; one ended by SIGKILL alone writes none.
 */
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { declaration, sh } from "../acceptance/cityCli.ts"

/** The lines both commands share: the host, the clock, the trap. */
const common = (log: string, kind: string, endpoint: string, extra: { readonly format: string; readonly args: string }) => [
  `log='${log}'`,
  "h=${PWD%/root}; h=${h##*/}",
  `kind=${kind}`,
  `endpoint="$h/${endpoint}"`,
  "read up _ < /proc/uptime",
  `trap 'read up _ < /proc/uptime; printf "end kind=%s pid=%s endpoint=%s t=%s signal=TERM\\n" "$kind" $$ "$endpoint" "$up" >> "$log"; exit 143' TERM`,
  `printf "start kind=%s pid=%s endpoint=%s t=%s ${extra.format}\\n" "$kind" $$ "$endpoint" "$up" ${extra.args} >> "$log"`,
  kind === "reload" ? "sleep 0.$(( $$ % 6 + 4 )) & wait $!" : "sleep 0.$(( $$ % 7 + 2 )) & wait $!",
  "read up _ < /proc/uptime",
  "printf \"end kind=%s pid=%s endpoint=%s t=%s status=0\\n\" \"$kind\" $$ \"$endpoint\" \"$up\" >> \"$log\""
]

/** Writes the three scripts into `bin` and returns their paths. */
export const write = (bin: string, log: string) =>
  Effect.gen(function*() {
    const provisioner = yield* sh(join(bin, "provisioner"), [
      "# provision|unprovision capability personality runtime cwd occasion",
      "cap=$2; occasion=$6",
      ...common(log, "$1", "$4/$3", { format: "capability=%s occasion=%s", args: "\"$cap\" \"$occasion\"" })
    ])
    const reload = yield* sh(join(bin, "reload"), [
      "# personality runtime cwd",
      "v=; read -r v < \"$3/.mcp.json\"; v=${v#*:}; v=${v%%\\}*}",
      ...common(log, "reload", "$2/$1", { format: "v=%s", args: "\"$v\"" })
    ])
    const status = yield* sh(join(bin, "status"), ["echo idle"])
    return { provisioner, reload, status }
  })

/** The declaration of `capability`, run by the shared provisioner on `claude`. */
export const declarationOf = (capability: string, provisioner: string) =>
  declaration({
    name: capability,
    runtimes: ["claude"],
    command: provisioner,
    provisionArgs: ["provision", capability, "{personality}", "{runtime}", "{cwd}", "{occasion}"],
    unprovisionArgs: ["unprovision", capability, "{personality}", "{runtime}", "{cwd}", "{occasion}"]
  })

/** A host's `host.json`: `claude` run through the scripts, and the fleet it belongs to. */
export const hostConfig = (
  scripts: { readonly reload: string; readonly status: string },
  cluster?: { readonly url: string; readonly host: string; readonly address: string }
) => ({
  schema: 1,
  agent_runtimes: ["claude"],
  channel_runtimes: [],
  profiles: {
    claude: {
      commands: {
        status: { command: scripts.status, args: ["{personality}", "{runtime}"] },
        reload: { command: scripts.reload, args: ["{personality}", "{runtime}", "{cwd}"] }
      }
    }
  },
  ...(cluster === undefined ? {} : { cluster })
})

/** The content of an endpoint's launch-read file at `version`. */
export const launchFile = (version: number) => `{"chaos":${version}}\n`
