/**
 * Whether the state root's host belongs to a fleet: `host.json`'s `cluster` (docs/cluster.md,
 * "Running a fleet"). Read before a verb chooses its stores: a host of a fleet keeps its
 * declarations, peers and owed work in the fleet's database (`run/cluster.ts`, the door to the
 * cluster packages, loaded only then). A `host.json` that cannot be read is left to the verb,
 * which reads it again and reports it.
 * @since 0.1.0
 */
import * as NodePath from "@effect/platform-node/NodePath"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { HostConfig } from "../../schema/HostConfig.ts"
import * as RuntimeProfiles from "../../services/capabilities/RuntimeProfiles.ts"
import * as StateRoot from "../../services/root/StateRoot.ts"

/** The fleet settings of `host.json`. */
export type ClusterConfig = NonNullable<HostConfig["cluster"]>

/** The root's fleet, if its host.json names one. */
export const configuredFleet = (root: string): Effect.Effect<Option.Option<ClusterConfig>, never, FileSystem.FileSystem> =>
  RuntimeProfiles.make.pipe(
    Effect.provide(StateRoot.layer({ root }).pipe(Layer.provide(NodePath.layer))),
    Effect.map((profiles) => Option.fromNullable(profiles.config.cluster)),
    Effect.orElseSucceed(() => Option.none<ClusterConfig>())
  )
