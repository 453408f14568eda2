/**
 * What the isolation tests share: a Session on a loaded City, the statuses a plugin goes through,
 * a failed exit in words, and whether a process is still there.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import type { startLoader } from "../loaderFixtures.ts"

/** A City with the loader, as `startLoader` builds it. */
export type Loaded = Effect.Effect.Success<ReturnType<typeof startLoader>>

/** A Session of a fresh agent on a workspace at `root`. */
export const sessionOn = (loaded: Loaded, root: string) =>
  Effect.gen(function*() {
    const agent = yield* loaded.sessions.agents.add({ id: "ada" })
    return yield* agent.sessions.create({ workspace: yield* loaded.workspaces.add({ id: "w", path: root }) })
  })

/** Every status `name` goes through from now on, with its last error, in order. */
export const watchStatuses = (loaded: Loaded, name: string) =>
  Effect.gen(function*() {
    const seen: Array<{ status: string; last_error: string | undefined }> = []
    yield* loaded.registry.changes.pipe(
      Stream.runForEach((change) =>
        Effect.sync(() => {
          if (change._tag === "Updated" && change.snapshot.name === name) seen.push({ status: change.snapshot.status, last_error: change.snapshot.last_error })
        })
      ),
      Effect.forkScoped
    )
    return seen
  })

/** A failed exit's cause in words. */
export const errorOf = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "(it succeeded)"

/** Whether a process `pid` is still there (`kill(pid, 0)` fails with ESRCH once it is gone). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}
