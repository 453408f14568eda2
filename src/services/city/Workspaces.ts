/**
 * Workspaces (spec: "Workspace is the project resource for the current call; it is not a Plugin
 * lifecycle boundary"). The City owns them: each has its own Scope, for resources that follow the
 * workspace, closed when the workspace is removed or, at the latest, last in the City's close.
 * Adding or removing a workspace never touches a plugin.
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { type CityClosed, WorkspaceError } from "../../schema/Errors.ts"
import { Closing } from "./internal/close.ts"

/**
 * A Workspace of the City: its id, its path on disk, and its Scope.
 * @since 0.1.0
 * @category models
 */
export interface Workspace {
  /** The Workspace's id, unique in the City. */
  readonly id: string
  /** Its path on disk. */
  readonly path: string
  /** Resources that follow this workspace go here; closed when it is released. */
  readonly scope: Scope.Scope
}

/**
 * The City's Workspaces: `city.workspaces`.
 * @since 0.1.0
 * @category models
 */
export interface WorkspacesShape {
  /** Adds a Workspace; fails if the id is taken. */
  readonly add: (options: { readonly id: string; readonly path: string }) => Effect.Effect<
    Workspace,
    WorkspaceError | CityClosed
  >
  /** The Workspace of this id, if any. */
  readonly get: (id: string) => Effect.Effect<Option.Option<Workspace>>
  /** Every Workspace. */
  readonly list: Effect.Effect<ReadonlyArray<Workspace>>
  /** Releases a workspace (closes its Scope); `false` for an unknown id. */
  readonly remove: (id: string) => Effect.Effect<boolean, WorkspaceError>
}

/**
 * The Workspaces service.
 * @since 0.1.0
 * @category tags
 */
export class Workspaces extends Context.Tag("effect-city/Workspaces")<Workspaces, WorkspacesShape>() {}

interface Entry {
  readonly workspace: Workspace
  readonly scope: Scope.CloseableScope
}

/** Closes a workspace's Scope (once), failing with what failed. */
const release = (entry: Entry): Effect.Effect<void, WorkspaceError> =>
  Effect.flatMap(Effect.exit(Scope.close(entry.scope, Exit.void)), (closed) =>
    Exit.isSuccess(closed)
      ? Effect.void
      : Effect.fail(new WorkspaceError({ reason: "WorkspaceReleaseFailed", id: entry.workspace.id, cause: closed.cause })))

/**
 * Makes the Workspaces service; its finalizer releases every workspace, last in close.
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const closing = yield* Closing
  const entries = new Map<string, Entry>()

  // Released last in the City's close: every workspace (recorded, a failed one too), each failure
  // reported, none skipped.
  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      Array.from(entries.values()).reverse(),
      (entry) => {
        entries.delete(entry.workspace.id)
        closing.released(entry.workspace.id)
        return Effect.catchAll(release(entry), (error) =>
          Effect.sync(() =>
            closing.report(`workspace ${entry.workspace.id}`, Cause.fail(error))
          ))
      },
      { discard: true }
    )
  )

  const service: WorkspacesShape = {
    add: ({ id, path }) =>
      Effect.zipRight(
        closing.check(`add workspace ${id}`),
        Effect.suspend(() => {
          if (entries.has(id)) return Effect.fail(new WorkspaceError({ reason: "WorkspaceAlreadyExists", id }))
          return Effect.map(Scope.make(), (scope) => {
            const workspace: Workspace = { id, path, scope }
            entries.set(id, { workspace, scope })
            return workspace
          })
        })
      ),
    get: (id) => Effect.sync(() => Option.map(Option.fromNullable(entries.get(id)), (e) => e.workspace)),
    list: Effect.sync(() => Array.from(entries.values(), (e) => e.workspace)),
    remove: (id) =>
      Effect.suspend(() => {
        const entry = entries.get(id)
        if (entry === undefined) return Effect.succeed(false)
        entries.delete(id)
        return Effect.as(release(entry), true)
      })
  }
  return service
})

/**
 * The Workspaces service as a scoped Layer: closing it releases every workspace.
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Workspaces, make)
