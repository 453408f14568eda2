/**
 * `city daemon --cluster <url>`: the daemon of one host of a fleet (docs/cluster.md, "Running a
 * fleet"). Everything `city daemon` does on one host, with the capability declarations, this
 * host's peers and its owed work in the fleet's database, and beside it the host's runner: it
 * serves this host's endpoints' messages (a `Reload` drains the endpoint's owed work, a
 * `Provision` runs its call here), reached by the other runners and clients at
 * `--cluster-address`, and announces the host with its `host.json`.
 *
 * Loaded only when `--cluster` is given: nothing else in the `city` program reaches the cluster
 * packages (their drivers are optional). Refused input (exit 2, before anything starts): a URL
 * that is neither `postgres://…` nor `sqlite:<file>`, a host name that is not a `Name`, an
 * address that is not `host:port` with a port of 1-65535. A database that cannot be reached, a
 * driver that is not installed or an address that is taken: `ClusterUnavailable`, exit 1.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { hostname } from "node:os"
import { layerWithStores } from "../../layers/internal/capabilityServices.ts"
import { ClusterUnavailable } from "../../schema/Live.ts"
import { isName, nameRule } from "../../schema/Name.ts"
import * as HttpListen from "../../schema/HttpListen.ts"
import { oneLine } from "../../schema/OneLine.ts"
import * as CommandRunner from "../../services/capabilities/CommandRunner.ts"
import * as ClusterDatabase from "../../services/cluster/ClusterDatabase.ts"
import * as ClusterHost from "../../services/cluster/ClusterHost.ts"
import * as Opt from "../options.ts"
import { type DaemonInput, type DaemonStores, daemonWith, reportFailure } from "./daemon.ts"

/** What `city daemon` is given with `--cluster`. */
export interface ClusterInput extends DaemonInput {
  readonly cluster: Option.Option<string>
  readonly clusterHost: Option.Option<string>
  readonly clusterAddress: string
}

const unavailable = (error: { readonly message: string }) =>
  error instanceof ClusterUnavailable ? error : new ClusterUnavailable({ detail: oneLine(error.message, 300) })

/** The fleet's stores and this host's runner, over one database client. */
const storesOf = (
  sql: ReturnType<typeof ClusterDatabase.layer>,
  host: string,
  address: HttpListen.HttpListen
): DaemonStores => ({
  capabilities: (root) =>
    layerWithStores(
      { root },
      CommandRunner.layer({}),
      ClusterHost.stores(host).pipe(Layer.mapError(unavailable), Layer.provide(sql))
    ),
  reloads: ClusterHost.reloads(host).pipe(Layer.mapError(unavailable), Layer.provide(sql)),
  beside: ClusterHost.layer({ host, address: { host: address.host, port: address.port } }).pipe(
    Layer.mapError(unavailable),
    Layer.provide(sql)
  )
})

/** The flags checked: the database, the host's name, the runner's address; or the refusal. */
const settings = (o: ClusterInput) =>
  Effect.gen(function*() {
    const url = Option.getOrElse(o.cluster, () => "")
    const target = yield* Either.mapLeft(ClusterDatabase.parse(url), (rule) => new Opt.UsageError({ message: `--cluster ${rule}` }))
    const host = Option.getOrElse(o.clusterHost, () => hostname().toLowerCase())
    if (!isName(host)) {
      return yield* new Opt.UsageError({
        message: `${Option.isSome(o.clusterHost) ? "--cluster-host" : `this machine's name ${JSON.stringify(host)} (give --cluster-host)`} ${nameRule}`
      })
    }
    const address = yield* Either.mapLeft(
      HttpListen.parse(o.clusterAddress),
      (rule) => new Opt.UsageError({ message: `--cluster-address ${rule}` })
    )
    if (address.port === 0) {
      return yield* new Opt.UsageError({ message: "--cluster-address needs a port of 1-65535: the other runners reach this one there" })
    }
    return { target, host, address }
  })

/** `city daemon --cluster <url>`. */
export const daemon = (o: ClusterInput) =>
  Effect.scoped(Effect.gen(function*() {
    const checked = yield* Effect.either(settings(o))
    if (Either.isLeft(checked)) return yield* reportFailure(o, checked.left)
    const { address, host, target } = checked.right
    // One client for the whole daemon, built when first needed (inside the daemon, so its failure
    // is reported as the daemon's), shared by the stores and the runner.
    const sql = yield* Layer.memoize(ClusterDatabase.layer(target))
    yield* daemonWith(o, storesOf(sql, host, address))
  }))
