/**
 * `city status` and `city reload`, the live application's verbs: each one's name, summary and
 * parameters; what it does is in `run/live.ts`, loaded when it runs.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Opt from "./options.ts"
import { loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/live.ts")

export const status = verb(
  "status",
  "Owed reloads and removals, whether a daemon is running to carry them out, its plugin generation and status page",
  { ...Opt.readOptions, url: Opt.flag("url", "Print the address of the status page the daemon serves (exit 1 when none)") },
  (o) => loaded(handlers, (live) => live.status(o)),
  ["city status", "city status --json", "city status --url"]
)

const runtimes = Opt.described(
  Options.text("runtime").pipe(Options.withPseudoName("name"), Options.withDescription("Only this runtime (repeatable)"), Options.repeated),
  { kind: "flag", usage: "--runtime <name>", description: "Only this runtime; repeat for several (default: every agent runtime)" }
)

export const reload = verb(
  "reload",
  "Request a reload of a peer's live endpoints (after writing a host-global file)",
  { ...Opt.readOptions, personality: Opt.text("personality", "The peer's name"), runtime: runtimes },
  (o) => loaded(handlers, (live) => live.reload(o)),
  ["city reload alice", "city reload alice --runtime codex --json"]
)
