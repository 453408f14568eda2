/**
 * `city plugins list|call|discover|reload|clear-quarantine`: each verb's name, summary and
 * parameters; what it does is in `run/plugins.ts` (`call`: `run/pluginCall.ts`), loaded when it runs.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Opt from "./options.ts"
import { group, loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/plugins.ts")
const callHandlers = () => import("./run/pluginCall.ts")

/** `--bundled <dir>`: the bundled plugin root (the `city plugins` verbs and `city daemon`). */
export const bundled = Opt.optionalText(
  "bundled",
  "dir",
  "The bundled plugin root, scanned before the instance root",
  "plugins.json's bundledRoot, else none"
)

const loaderOptions = { ...Opt.readOptions, bundled }

const discover = verb(
  "discover",
  "List the plugin folders of both roots by reading their manifests (never runs plugin code)",
  loaderOptions,
  (o) => loaded(handlers, (plugins) => plugins.discover(o)),
  ["city plugins discover --json", "city plugins discover --bundled /opt/app/plugins"]
)

const list = verb(
  "list",
  "List the plugins of the running daemon's generation, or load the plugin set in a throwaway City when none runs",
  { ...loaderOptions, freezeLimit: Opt.freezeLimit },
  (o) => loaded(handlers, (plugins) => plugins.list(o)),
  ["city plugins list", "city plugins list --json --bundled /opt/app/plugins", "city plugins list --freeze-limit 10"]
)

const input = Opt.optionalText(
  "input",
  "json",
  "The action's input as JSON, decoded by the action's Schema",
  "none: the action is given undefined"
)

const call = verb(
  "call",
  "Call a plugin's action and print its result: in the running daemon's City, else in a throwaway City",
  {
    ...loaderOptions,
    freezeLimit: Opt.freezeLimit,
    plugin: Opt.text("plugin", "The plugin's name"),
    action: Opt.text("action", "The action's name"),
    input
  },
  (o) => loaded(callHandlers, (pluginCall) => pluginCall.call(o)),
  [
    "city plugins call notes add --input '{\"text\": \"buy milk\"}'",
    "city plugins call clock now --json"
  ]
)

const clearQuarantine = verb(
  "clear-quarantine",
  "Take a plugin out of the quarantine a freeze of the daemon's thread put it in (from the next daemon start)",
  { ...Opt.readOptions, name: Opt.text("name", "The quarantined plugin's name") },
  (o) => loaded(handlers, (plugins) => plugins.clearQuarantine(o)),
  ["city plugins clear-quarantine spin"]
)

const reason = Opt.described(
  Options.text("reason").pipe(
    Options.withPseudoName("text"),
    Options.withDescription("Why the restart is asked for (shown in the daemon's log)"),
    Options.withDefault("requested by city plugins reload")
  ),
  {
    kind: "flag",
    usage: "--reason <text>",
    description: "Why the restart is asked for (shown in the daemon's log)",
    default: "requested by city plugins reload"
  }
)

const wait = Opt.described(
  Options.boolean("wait").pipe(Options.withDescription("Wait (up to 60 s) for the running daemon to apply the restart")),
  { kind: "flag", usage: "--wait", description: "Wait (up to 60 s) for the running daemon to apply the restart" }
)

const reload = verb(
  "reload",
  "Ask the city daemon for a restart by generation (recorded; carried out when it starts if none runs)",
  { ...Opt.readOptions, reason, wait },
  (o) => loaded(handlers, (plugins) => plugins.reload(o)),
  ["city plugins reload", "city plugins reload --reason 'settings changed' --wait"]
)

export const plugins = group("plugins", "Plugin folders: what the roots hold, what loads, calls of their actions, and restarts of the daemon's generation", [
  list,
  call,
  discover,
  reload,
  clearQuarantine
])
