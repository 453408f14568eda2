/**
 * `city peer create|init|add-runtime|default-runtime|remove|remove-runtime|list`: each verb's
 * name, summary and parameters; what it does is in `run/peer.ts`, loaded when it runs.
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Options from "@effect/cli/Options"
import * as Opt from "./options.ts"
import { group, loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/peer.ts")

const runtimeOption = Opt.described(
  Options.text("runtime").pipe(
    Options.withPseudoName("name"),
    Options.withDescription("A runtime of the peer (repeat for several; the first is the default)"),
    Options.atLeast(1)
  ),
  {
    kind: "flag",
    usage: "--runtime <name>",
    description: "A runtime of the peer; repeat for several, the first is the default",
    required: true
  }
)

const personalityArg = Opt.text("personality", "The peer's name")

const runtimeArg = Opt.text("runtime", "A runtime name (claude, codex, opencode, or one of host.json)")

const create = verb(
  "create",
  "Create a peer and provision its endpoints (birth)",
  {
    ...Opt.commandOptions,
    personality: personalityArg,
    cwd: Opt.described(
      Options.text("cwd").pipe(Options.withPseudoName("dir"), Options.withDescription("The peer's working directory")),
      { kind: "flag", usage: "--cwd <dir>", description: "The peer's working directory (absolute)", required: true }
    ),
    runtime: runtimeOption
  },
  (o) => loaded(handlers, (peer) => peer.create(o)),
  ["city peer create alice --cwd ~/src/alice --runtime claude --runtime opencode"]
)

const init = verb(
  "init",
  "Create a peer whose working directory is the current one (birth)",
  {
    ...Opt.commandOptions,
    personality: Opt.described(Args.text({ name: "personality" }).pipe(Args.optional), {
      kind: "argument",
      usage: "[<personality>]",
      description: "The peer's name",
      default: "the name of the current directory"
    }),
    runtime: runtimeOption
  },
  (o) => loaded(handlers, (peer) => peer.init(o)),
  ["cd ~/src/alice && city peer init --runtime claude"]
)

const addRuntime = verb(
  "add-runtime",
  "Declare a runtime for a peer (or repair it) and provision its endpoints (birth)",
  { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
  (o) => loaded(handlers, (peer) => peer.addRuntime(o))
)

const defaultRuntime = verb(
  "default-runtime",
  "Make a runtime the default; an unwired runtime is wired first (birth)",
  { ...Opt.commandOptions, personality: personalityArg, runtime: runtimeArg },
  (o) => loaded(handlers, (peer) => peer.defaultRuntime(o))
)

const remove = verb(
  "remove",
  "Unprovision the peer's endpoints (remove), then purge its state",
  {
    ...Opt.commandOptions,
    personality: personalityArg,
    force: Opt.force("Remove the peer even when its peer file is invalid; its endpoints cannot be unprovisioned and are listed")
  },
  (o) => loaded(handlers, (peer) => peer.remove(o))
)

const removeRuntime = verb(
  "remove-runtime",
  "Unprovision a runtime's endpoints (remove) and drop it; a busy endpoint is removed after its Turn",
  {
    ...Opt.commandOptions,
    personality: personalityArg,
    runtime: runtimeArg,
    force: Opt.described(
      Options.boolean("force").pipe(Options.withDescription("Kill a live session now instead of waiting for its Turn")),
      { kind: "flag", usage: "--force", description: "Kill a live session now instead of waiting for its Turn, and remove it" }
    )
  },
  (o) => loaded(handlers, (peer) => peer.removeRuntime(o))
)

const list = verb(
  "list",
  "List every peer with its runtimes and working directory",
  Opt.readOptions,
  (o) => loaded(() => import("./run/peerList.ts"), (listing) => listing.list(o))
)

export const peer = group("peer", "Peers and their runtimes (endpoint birth and removal)", [
  create,
  init,
  addRuntime,
  defaultRuntime,
  remove,
  removeRuntime,
  list
])
