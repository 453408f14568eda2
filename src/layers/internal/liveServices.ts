/**
 * The live application's services over a given owed-work store (docs/cluster.md: the files on one
 * host, SQL for many): the live joints, the applier, the store and the fingerprints.
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as Applier from "../../services/live/Applier.ts"
import * as Fingerprints from "../../services/live/Fingerprints.ts"
import * as LiveJoints from "../../services/live/LiveJoints.ts"
import type { Reloads } from "../../services/owed/Reloads.ts"

/**
 * The services over `reloads`.
 * @since 0.1.0
 * @category internals
 */
export const servicesWith = <E, R>(reloads: Layer.Layer<Reloads, E, R>) =>
  LiveJoints.layer.pipe(
    Layer.provideMerge(Applier.layer),
    Layer.provideMerge(Layer.mergeAll(reloads, Fingerprints.layer))
  )
