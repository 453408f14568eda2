/**
 * `city capability register|sync|unregister|list`: each verb's name, summary and parameters; what
 * it does is in `run/capability.ts`, loaded when it runs.
 * @since 0.1.0
 */
import * as Opt from "./options.ts"
import { group, loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/capability.ts")

const nameArg = Opt.text("name", "The name of a registered capability")

/** `--cluster`: the sweep is the fleet's (docs/cluster.md, "Verbs on a fleet"). */
const cluster = Opt.optionalText(
  "cluster",
  "url",
  "Register for a fleet: store the declaration in the fleet's database and sweep every host's endpoints",
  "host.json's cluster.url, else this host's files"
)

const register = verb(
  "register",
  "Validate a declaration file, store it, and provision every endpoint (sweep-on)",
  { ...Opt.commandOptions, cluster, file: Opt.file("file", "The declaration to register (JSON, named <capability>.json)") },
  (o) => loaded(handlers, (capability) => capability.register(o)),
  ["city capability register ./stat.json", "city capability register ./stat.json --json --concurrency 8"]
)

const sync = verb(
  "sync",
  "Provision every endpoint of a registered capability again (the repair)",
  { ...Opt.commandOptions, cluster, name: nameArg },
  (o) => loaded(handlers, (capability) => capability.sync(o))
)

const unregister = verb(
  "unregister",
  "Unprovision every endpoint (off-all), then delete the declaration",
  {
    ...Opt.commandOptions,
    cluster,
    name: nameArg,
    force: Opt.force("Delete the declaration even when it is invalid; its endpoints cannot be unprovisioned and are listed")
  },
  (o) => loaded(handlers, (capability) => capability.unregister(o))
)

const list = verb(
  "list",
  "List each declaration, its version, its endpoints and their last state",
  Opt.readOptions,
  (o) => loaded(() => import("./run/capabilityList.ts"), (listing) => listing.list(o))
)

export const capability = group("capability", "Capability plugins: declarations and their provisioning sweeps", [
  register,
  sync,
  unregister,
  list
])
