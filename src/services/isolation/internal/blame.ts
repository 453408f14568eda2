/**
 * Names the code an unresponsive worker thread is running (docs/plugin-loader.md, "Liveness"):
 * V8's inspector is served between JavaScript instructions, not by the event loop, so it answers
 * for an isolate whose loop is stuck. From the host's thread, a `node:inspector` Session attaches
 * to the worker through the `NodeWorker` domain, enables the debugger (which reports every
 * script's URL) and pauses the thread; the innermost frame in the plugin's folder is named, with
 * its function, file and line. The thread is then resumed and the session detached, so that it can
 * be ended (a paused thread holds up its own `terminate`).
 *
 * A pause lands wherever the thread is. For a microtask loop that is often inside Node's own
 * promise bookkeeping, with no frame of the plugin on the stack: the thread is then resumed and
 * paused again, a few times. Checked on Node 20: a `for (;;) {}` is named at the first pause; a
 * microtask loop within a few. V8's CPU profiler was tried instead and named neither reliably (it
 * took one sample of a microtask loop in a quarter of a second, and charged an inlined spin to its
 * caller).
 *
 * Best effort: anything that goes wrong (a thread already gone, no frame
 * of the plugin's found) is `None` (or the innermost frame outside Node's own modules), and the
 * caller ends the thread anyway.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
// A static import: the `city` binary runs its bundle as a `vm.Script`, which cannot `import()`.
import { Session } from "node:inspector"

/** How many times the thread is paused to find a frame of the plugin's own. */
const maxPauses = 25

/** How long the thread runs between two pauses. */
const betweenPauses = 10

/** A frame of `Debugger.paused`, as much of it as is read here. */
interface Frame {
  readonly functionName: string
  readonly location: { readonly scriptId: string; readonly lineNumber: number; readonly columnNumber: number }
}

/** A message from the worker's inspector: an event (`method`); answers are not read. */
interface InspectorMessage {
  readonly method?: string
  readonly params?: {
    readonly scriptId?: string
    readonly url?: string
    readonly callFrames?: ReadonlyArray<Frame>
  }
}

/**
 * Where the thread `threadId` is running: `name (url:line:column)` of the innermost frame in the
 * plugin's folder (`folderUrl`), else of the innermost frame outside Node's own modules, or `None`
 * when it cannot be told within the time the caller gives it.
 * @since 0.1.0
 * @category internals
 */
export const blameThread = (threadId: number, folderUrl: string): Effect.Effect<Option.Option<string>> =>
  Effect.async<Option.Option<string>>((resume) => {
    let done = false
    let session: Session | undefined
    let attached: string | undefined
    let paused = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let nextId = 0
    const send = (open: Session, sessionId: string, method: string) =>
      open.post("NodeWorker.sendMessageToWorker", { sessionId, message: JSON.stringify({ id: ++nextId, method }) })
    const close = () => {
      if (timer !== undefined) clearTimeout(timer)
      const open = session
      session = undefined
      if (open === undefined) return
      try {
        if (attached !== undefined) {
          if (paused) send(open, attached, "Debugger.resume")
          send(open, attached, "Debugger.disable")
          open.post("NodeWorker.detach", { sessionId: attached })
        }
        open.disconnect()
      } catch {
        // The session is already closed: nothing is held.
      }
    }
    const finish = (found: Option.Option<string>) => {
      if (done) return
      done = true
      close()
      resume(Effect.succeed(found))
    }

    try {
      const open = new Session()
      session = open
      const scripts = new Map<string, string>()
      let pauses = 0
      let fallback: string | undefined
      const urlOf = (frame: Frame) => scripts.get(frame.location.scriptId) ?? ""
      const describe = (frame: Frame) =>
        `${frame.functionName === "" ? "(anonymous)" : frame.functionName} (${urlOf(frame)}:${frame.location.lineNumber + 1}:${
          frame.location.columnNumber + 1
        })`
      open.connect()
      open.on("NodeWorker.attachedToWorker", (message) => {
        const { sessionId, workerInfo } = message.params
        // The inspector numbers workers its own way (`workerId`); the thread's id is in its title,
        // `[worker <threadId>]`, followed on Node 22+ by the worker's name (`[worker 1] WorkerThread`).
        // Node's module-hook threads are listed too, under other ids.
        const title: string = workerInfo.title
        if (!(title === `[worker ${threadId}]` || title.startsWith(`[worker ${threadId}] `)) || attached !== undefined) return
        attached = sessionId
        send(open, sessionId, "Debugger.enable")
        send(open, sessionId, "Debugger.pause")
      })
      open.on("NodeWorker.receivedMessageFromWorker", (message) => {
        const sessionId = message.params.sessionId
        if (sessionId !== attached || done) return
        const parsed = JSON.parse(message.params.message) as InspectorMessage
        if (parsed.method === "Debugger.scriptParsed" && parsed.params?.scriptId !== undefined) {
          scripts.set(parsed.params.scriptId, parsed.params.url ?? "")
        } else if (parsed.method === "Debugger.paused") {
          paused = true
          const frames = parsed.params?.callFrames ?? []
          const own = frames.find((f) => urlOf(f).startsWith(folderUrl))
          if (own !== undefined) return finish(Option.some(describe(own)))
          const outside = frames.find((f) => urlOf(f) !== "" && !urlOf(f).startsWith("node:"))
          if (outside !== undefined) fallback ??= describe(outside)
          if (++pauses >= maxPauses) return finish(Option.fromNullable(fallback))
          // Let it run a little, then look again (a pause asked for while paused is lost).
          send(open, sessionId, "Debugger.resume")
          paused = false
          timer = setTimeout(() => {
            if (!done) send(open, sessionId, "Debugger.pause")
          }, betweenPauses)
        }
      })
      open.post("NodeWorker.enable", { waitForDebuggerOnStart: false }, (error) => {
        if (error !== null) finish(Option.none())
      })
    } catch {
      finish(Option.none())
    }
    return Effect.sync(() => {
      close()
      done = true
    })
  })
