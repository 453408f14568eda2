/**
 * `city fleet --cluster <url>`: the hosts of a fleet, read from its database (docs/cluster.md,
 * "The fleet's status"). Its code is behind the `city` program's one door to the cluster packages
 * (`run/cluster.ts`), loaded when it runs.
 * @since 0.1.0
 */
import * as Opt from "./options.ts"
import { loaded, verb } from "./verbs.ts"

const handlers = () => import("./run/cluster.ts")

const cluster = Opt.optionalText("cluster", "url", "The fleet's database: postgres://… (or sqlite:<file>)", "host.json's cluster.url")

export const fleet = verb(
  "fleet",
  "The hosts of a fleet: up or down, when last seen, their peers, endpoints and owed work",
  { ...Opt.readOptions, cluster },
  (o) => loaded(handlers, (run) => run.fleet(o)),
  ["city fleet", "city fleet --cluster postgres://city@db.internal/fleet", "city fleet --json"]
)
