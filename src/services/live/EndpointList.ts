/**
 * The endpoint list of the daemon (docs/live-application.md, "Fingerprints"): every endpoint of the
 * state root, as `makeRefs(...).all` reads it, read again only when the `peers/` folder may have
 * changed (files/FolderRead.ts says when). The daemon asks for the list at every poll (to host new
 * endpoints, to watch their launch-read folders); with thousands of peers, reading every peer file
 * each time was most of an idle daemon's work. Unchanged, the answer is the same array.
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as FolderRead from "../files/FolderRead.ts"
import type { EndpointRef } from "./EndpointHost.ts"

/**
 * A list of every endpoint, read again only when `folder` may have changed (see the module
 * comment): `read` is how the list is read, `folder` the absolute path of `peers/`. The returned
 * effect is the list now.
 * @since 0.1.0
 * @category constructors
 */
export const make = <E>(
  read: Effect.Effect<ReadonlyArray<EndpointRef>, E>,
  folder: string,
  refresh: Duration.DurationInput
): Effect.Effect<Effect.Effect<ReadonlyArray<EndpointRef>, E>, never, FileSystem.FileSystem | Scope.Scope> =>
  FolderRead.make(read, [folder], refresh)
