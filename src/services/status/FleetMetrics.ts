/**
 * The fleet's metrics, set by the status board of a host of a fleet (docs/status-page.md,
 * docs/cluster.md "The fleet's status"): the binary's, exported by `/metrics`, not by the package.
 * @since 0.1.0
 */
import * as Metric from "effect/Metric"

/**
 * On a host of a fleet, per host (label `host`), as the status board last read the fleet's
 * database (docs/cluster.md, "The fleet's status"): `city_fleet_host_up` 1 when a runner of it is
 * registered and healthy, else 0; `city_fleet_endpoints`, `city_fleet_reloads_owed` and
 * `city_fleet_removals_owed` as `city fleet` counts them. Set at each successful read (at most
 * every 5 s); a failed read leaves the last values, as the page keeps the last fleet. Hosts are
 * never taken out of the fleet's table, so no series goes stale.
 * @since 0.1.0
 * @category metrics
 */
export const fleetHostUp = Metric.gauge("city_fleet_host_up", {
  description: "1 when the fleet host's runner is registered and healthy, else 0, by host"
})

/**
 * A fleet host's endpoints (see `fleetHostUp`).
 * @since 0.1.0
 * @category metrics
 */
export const fleetEndpoints = Metric.gauge("city_fleet_endpoints", {
  description: "endpoints (peer, runtime) a fleet host runs, by host"
})

/**
 * A fleet host's owed reloads (see `fleetHostUp`).
 * @since 0.1.0
 * @category metrics
 */
export const fleetReloadsOwed = Metric.gauge("city_fleet_reloads_owed", {
  description: "endpoints with a reload owed on a fleet host, by host"
})

/**
 * A fleet host's owed removals (see `fleetHostUp`).
 * @since 0.1.0
 * @category metrics
 */
export const fleetRemovalsOwed = Metric.gauge("city_fleet_removals_owed", {
  description: "endpoints with a removal owed on a fleet host, by host"
})
