/**
 * Where the running daemon's control channel listens (docs/cli.md, "The daemon's control
 * channel"), and the record that says so: `$CITY_ROOT/state/control.json` (0600), `{ schema, pid,
 * path }`, written once the socket listens and removed when the daemon stops. A record naming a
 * pid that is not the running daemon's (a daemon killed with SIGKILL left it) is not believed, as
 * StatusAddress.ts does for the status page.
 *
 * Decisions on the socket's path:
 * - `$CITY_ROOT/state/control.sock`, in the state folder (0700, only the owner can reach the
 *   socket; the socket itself is made 0600 once it listens).
 * - A Unix socket's address holds at most 103 bytes here (macOS's `sun_path` is 104 bytes, Linux's
 *   108, each with a closing NUL; Node cuts a longer path silently and listens somewhere else).
 *   When the root's path makes `state/control.sock` longer, the socket goes to
 *   `<os.tmpdir()>/city-control-<16 hex digits of the root's SHA-256>/control.sock` (`/tmp` when
 *   even that is too long), a folder the daemon makes 0700, refuses when it is a symlink or someone
 *   else's, and removes when it stops. Clients never derive the path: they read it from the record.
 * - A socket left at that path (a daemon killed with SIGKILL) is removed at start: the daemon lock
 *   is held by then, so no live daemon serves it. Anything else there (a file, a folder) is left as
 *   it is and the start fails naming it.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { ControlRecord } from "../../schema/ControlChannel.ts"
import { DaemonError } from "../../schema/Live.ts"
import { folderMode } from "../root/FileModes.ts"
import { StateRoot } from "../root/StateRoot.ts"
import { layout } from "../root/CityRoot.ts"
import * as DaemonLock from "../live/DaemonLock.ts"

/**
 * The longest socket path used, in bytes (UTF-8).
 * @since 0.1.0
 * @category constants
 */
export const maxSocketPath = 103

/**
 * Where the socket of the daemon on `root` goes: `state/control.sock` under it, or, when that is
 * longer than `maxSocketPath`, a private folder of its own under the temp folder (`folder`, made
 * and removed by the daemon).
 * @since 0.1.0
 * @category constructors
 */
export const place = (root: string, tmp: string = os.tmpdir()): { readonly path: string; readonly folder?: string } => {
  const inRoot = path.join(root, layout.controlSocket)
  if (Buffer.byteLength(inRoot) <= maxSocketPath) return { path: inRoot }
  const name = `city-control-${createHash("sha256").update(path.resolve(root)).digest("hex").slice(0, 16)}`
  const under = (base: string) => ({ path: path.join(base, name, "control.sock"), folder: path.join(base, name) })
  const inTmp = under(tmp)
  return Buffer.byteLength(inTmp.path) <= maxSocketPath ? inTmp : under("/tmp")
}

const failed = (where: string, detail: string) => new DaemonError({ reason: "ControlChannelFailed", path: where, detail })

/** The reason of a platform error in words (`EACCES: permission denied, …`), else its message. */
const detailOf = (error: { readonly message: string }): string => {
  const description: unknown = Reflect.get(error, "description")
  return typeof description === "string" ? description : error.message
}

/** Whether `file` is a symbolic link (reading it as one succeeds). */
const isLink = (fs: FileSystem.FileSystem, file: string) => Effect.isSuccess(fs.readLink(file))

/** The fallback folder, private: made 0700, or, when it exists, a folder of this user's (not a link), tightened to 0700. */
const privateFolder = (folder: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const made = yield* Effect.either(fs.makeDirectory(folder, { mode: folderMode }))
    if (Either.isLeft(made) && !(made.left._tag === "SystemError" && made.left.reason === "AlreadyExists")) {
      return yield* failed(folder, detailOf(made.left))
    }
    if (yield* isLink(fs, folder)) return yield* failed(folder, "is a symbolic link, not a folder of its own")
    const info = yield* Effect.mapError(fs.stat(folder), (e) => failed(folder, detailOf(e)))
    const owner = Option.getOrUndefined(info.uid)
    if (info.type !== "Directory") return yield* failed(folder, `is a ${info.type}, not a folder`)
    if (owner !== undefined && owner !== process.getuid?.()) return yield* failed(folder, `belongs to uid ${owner}, not to this user`)
    yield* Effect.mapError(fs.chmod(folder, folderMode), (e) => failed(folder, detailOf(e)))
  })

/** A socket (or a link) left at `file` is removed; nothing there is fine; anything else fails the start. */
const clearStale = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* isLink(fs, file))) {
      const info = yield* fs.stat(file).pipe(
        Effect.map(Option.some),
        Effect.catchTag("SystemError", (e) => e.reason === "NotFound" ? Effect.succeed(Option.none()) : Effect.fail(e)),
        Effect.mapError((e) => failed(file, detailOf(e)))
      )
      if (Option.isNone(info)) return
      if (info.value.type !== "Socket") return yield* failed(file, `is a ${info.value.type}, not a socket: left in place`)
    }
    yield* Effect.mapError(fs.remove(file), (e) => failed(file, detailOf(e)))
    yield* Effect.logInfo(`control channel: removed the socket a previous daemon left at ${file}`)
  })

/**
 * Makes the socket's place ready for the daemon (its folder private, a socket left there removed)
 * and gives it. Call it holding the daemon lock.
 * @since 0.1.0
 * @category constructors
 */
export const prepare = Effect.gen(function*() {
  const state = yield* StateRoot
  const where = place(state.root)
  if (where.folder === undefined) {
    yield* Effect.mapError(state.makeDirectory(path.dirname(layout.controlSocket)), (e) => failed(where.path, e.message))
  } else {
    yield* privateFolder(where.folder)
  }
  yield* clearStale(where.path)
  return where
})

/**
 * Records where this process's channel listens; removes the record when the caller's Scope closes.
 * @since 0.1.0
 * @category constructors
 */
export const publish = (socket: string, version?: string) =>
  Effect.flatMap(StateRoot, (state) =>
    Effect.acquireRelease(
      state.writeJson(
        layout.controlRecord,
        { schema: 1, pid: process.pid, path: socket, ...(version === undefined ? {} : { version }) } satisfies ControlRecord
      ),
      () => Effect.ignore(state.remove(layout.controlRecord))
    ))

const decode = Schema.decodeUnknownEither(Schema.parseJson(ControlRecord))

/**
 * The running daemon of the root and where its channel listens (with the daemon's version, when
 * its record says it): none when no daemon runs; the daemon's pid with no path while it has
 * published none (it is starting, or it left the record of a daemon that is gone in place).
 * @since 0.1.0
 * @category getters
 */
export const current = Effect.gen(function*() {
  const daemon = yield* DaemonLock.running
  if (Option.isNone(daemon)) {
    return Option.none<{ readonly pid: number; readonly path: Option.Option<string>; readonly version: Option.Option<string> }>()
  }
  const pid = daemon.value.pid
  const text = yield* (yield* StateRoot).readText(layout.controlRecord)
  const record = Option.filter(Option.flatMap(text, (t) => Either.getRight(decode(t))), (r) => r.pid === pid)
  return Option.some({
    pid,
    path: Option.map(record, (r) => r.path),
    version: Option.flatMap(record, (r) => Option.fromNullable(r.version))
  })
})
