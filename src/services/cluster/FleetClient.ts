/**
 * A client of the fleet (docs/cluster.md, "Verbs on a fleet"): what a `city` verb run against a
 * fleet needs, over one database client: `Sharding` and the message storage of a client that runs
 * no entity, and `@effect/cluster`'s workflow engine, through which it starts a sweep that a host's
 * runner carries out.
 * @since 0.1.0
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as Layer from "effect/Layer"
import * as ClusterRunner from "./ClusterRunner.ts"

/**
 * The client, with the workflow engine, over the `SqlClient` provided.
 * @since 0.1.0
 * @category layers
 */
export const layer = ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(ClusterRunner.clientLayer))
